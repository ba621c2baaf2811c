"""theorems.optimizers: the public Optimizer definition, its validation and its proven facts (with controls)."""
import numpy as np
import pytest
import sympy as sp

from theorems import InvalidArgument
from theorems import optimizers as O


def test_builtins_are_definitions_with_two_forms():
    names = [o.name for o in O.BUILTIN_OPTIMIZERS]
    assert names == ["gd", "ngd", "sign", "adam", "rmsprop", "muon"]
    for o in O.BUILTIN_OPTIMIZERS:
        for b in ("V", "a"):
            r = o.rules[b]
            assert O.theta in r.flow and r.step[-1][0] == O.theta
    assert not O.SIGN.smooth and O.ADAM.smooth
    assert O.get_optimizer("adam") is O.ADAM


@pytest.mark.parametrize("kwargs, needle", [
    ({"flow": {O.theta: -O.g}, "step": [(O.theta, "theta - g")]}, "string"),
    ({"flow": {O.theta: -O.g * sp.Symbol("q")}, "step": [(O.theta, O.theta - O.lr * O.g)]}, "unknown symbols ['q']"),
    ({"flow": {O.theta: -O.g}, "step": []}, "theta last"),
    ({"flow": {}, "step": [(O.theta, O.theta)]}, "expected theta and each state"),
    ({"flow": {O.theta: -O.g}, "step": [(O.theta, O.theta)], "norm": "rows"}, "norm='rows'"),
])
def test_bad_definitions_are_refused_with_the_argument(kwargs, needle):
    with pytest.raises(InvalidArgument, match=None) as e:
        O.Optimizer("bad-opt", **kwargs)
    assert needle in str(e.value)


def test_names_are_one_definition():
    with pytest.raises(InvalidArgument, match="shadow"):
        O.register_optimizer(O.Optimizer("adam", flow={O.theta: -O.g}, step=[(O.theta, O.theta - O.lr * O.g)]))
    with pytest.raises(InvalidArgument, match="expected one of"):
        O.get_optimizer("adamw-nope")


def test_hyper_overrides_are_validated():
    vals = O.hyper_values(O.ADAM, {"beta1": 0.8})
    assert vals[O.beta1] == sp.Rational(0.8) and vals[O.eps] == sp.Rational(1e-8)
    with pytest.raises(InvalidArgument, match="no parameter 'gamma'"):
        O.hyper_values(O.ADAM, {"gamma": 1})
    with pytest.raises(InvalidArgument, match="positive"):
        O.hyper_values(O.ADAM, {"eps": -1.0})


def test_adam_start_is_the_limit_of_the_bias_correction():
    start = O.ADAM.flow_at_start("a")[O.theta]
    assert sp.simplify(start - (-O.g / (sp.Abs(O.g) + O.eps))) == 0
    # negative control: substituting the initial moments first would give 0 (the 0/0 read as 0)
    naive = O.ADAM.rules["a"].flow[O.theta].subs({O.m: 0, O.v: 0, O.t: 0})
    assert naive == 0 and start != 0


def test_normalized_flow_is_gradient_flow_on_the_arc_length_clock():
    res = O.time_change(O.NGD, "a")
    assert res["multiplier"] == 1 / sp.sqrt(O.G2) and res["arc_length"]
    assert all(r.status == "proved" for _, r in res["proofs"])
    planted = O.time_change(O.NGD, "a", planted=True)
    assert planted["proofs"][-1][1].status == "disproved"
    assert O.time_change(O.GD)["multiplier"] == 1 and not O.time_change(O.GD)["arc_length"]
    for opt in (O.SIGN, O.ADAM, O.RMSPROP):
        assert O.time_change(opt)["multiplier"] is None


@pytest.mark.parametrize("d, n", [(1, 2), (2, 3), (3, 2)])
def test_muon_closed_form_is_the_polar_factor(d, n):
    assert all(r.status == "proved" for _, r in O.muon_closed_form(d, n))
    bad = [r.status for _, r in O.muon_closed_form(d, n, planted=True)]
    assert "disproved" in bad


def test_muon_closed_form_matches_the_svd_polar_factor():
    rng = np.random.default_rng(0)
    g, phi = rng.normal(size=3), rng.random(4) + 0.1
    G = np.outer(g, phi)
    U, S, Wt = np.linalg.svd(G)
    P_svd = np.outer(U[:, 0], Wt[0])  # rank one: the polar factor on the range
    closed = G / np.linalg.norm(G)
    assert np.abs(P_svd - closed).max() < 1e-14
    # control: the V-gradient normalized by ||g|| only is not the polar factor
    assert np.abs(P_svd - G / np.linalg.norm(g)).max() > 1e-2


@pytest.mark.parametrize("opt, status", [(O.GD, "proved"), (O.NGD, "proved"), (O.MUON, "proved"),
                                         (O.SIGN, "disproved"), (O.ADAM, "disproved"), (O.RMSPROP, "disproved")])
def test_which_optimizers_keep_the_sum_of_logits(opt, status):
    assert O.sum_of_logits(opt, 3).status == status


def test_switching_surfaces_are_read_off_the_definition():
    assert O.SIGN.switching_functions("a") == [O.g]
    odd = O.Optimizer("odd-sign", flow={O.theta: -sp.sign(O.g - 1)}, step=[(O.theta, O.theta - O.lr)])
    with pytest.raises(InvalidArgument, match="surface other than g_i = 0"):
        odd.switching_functions("a")


def test_a_models_file_registers_a_user_optimizer(tmp_path):
    """Users add an optimizer the way they add a link: a module-level definition in a --models file."""
    from theorems import load_models_file

    f = tmp_path / "my_opt.py"
    f.write_text("import sympy as sp\nfrom theorems.optimizers import Optimizer, g, theta, lr\n"
                 "HEAVY = Optimizer('heavy-gd', flow={theta: -2 * g}, step=[(theta, theta - 2 * lr * g)])\n")
    defs = load_models_file(f)
    assert [d.name for d in defs] == ["heavy-gd"]
    assert O.get_optimizer("heavy-gd").rules["a"].flow[O.theta] == -2 * O.g
    assert O.time_change(O.get_optimizer("heavy-gd"))["multiplier"] == 2
    bad = tmp_path / "bad_opt.py"
    bad.write_text("from theorems.optimizers import Optimizer, g, theta, lr\n"
                   "X = Optimizer('gd', flow={theta: -3 * g}, step=[(theta, theta - lr * g)])\n")
    with pytest.raises(InvalidArgument, match="shadow"):
        load_models_file(bad)


def test_derive_facts_prove_what_holds_and_reject_the_controls():
    facts = {lab: pr for lab, _, pr in O.derive_facts(O.NGD)}
    assert facts["time change: ngd/V: unit speed sum_i (dtheta_i/ds)^2 = 1 (n = 4)"].status == "proved"
    assert facts["time change, control: lambda^2 instead of lambda"].status == "disproved"
    muon = O.derive_facts(O.MUON)
    assert any(lab.startswith("polar factor: ") and pr.status == "proved" for lab, _, pr in muon)
    assert any(lab.startswith("polar factor, control") and pr.status == "disproved" for lab, _, pr in muon)
    assert any("not a time change" in st for _, st, _ in muon)
    adam = {lab: st for lab, st, _ in O.derive_facts(O.ADAM)}
    assert adam["flow at t = 0 (V and a), a limit"] == "dtheta/dt(0) = -g/(eps + Abs(g))"
    assert not any(lab.startswith("polar factor") for lab, _, _ in O.derive_facts(O.NGD))  # all-parameter norm
