"""The sink normalizations as built-in link names: softmax1, stablemax, softpick and the family ssmax-n<N>."""
import json
import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import numerics
import theorems as T
from numerics.integrate import resolve_backend, taylor
from theorems import InvalidArgument
from theorems.sinks import SOFTMAX1, SOFTPICK, STABLEMAX, ssmax

ROOT = Path(__file__).resolve().parents[1]
x = sp.Symbol("x", real=True)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "softpolar", *args], capture_output=True, text=True, timeout=600)


def test_sink_links_are_built_in_names_of_the_public_definitions():
    for name, K in (("softmax1", SOFTMAX1), ("stablemax", STABLEMAX), ("softpick", SOFTPICK)):
        assert T.get_link(name) is K and T.is_builtin(name) and T.is_builtin(K) and K.provenance == "D"
        assert name in T.all_links() and name in T.SINK_LINKS
        assert name not in T.LINKS and not T.is_paper_link(name)  # the paper's six stay what the suite enumerates
    assert list(T.LINKS) == ["softmax", "sigmoid", "relu-norm", "l1-norm", "l2-norm", "sum-norm"]
    # pickling (worker processes) gives back the built-in object
    assert pickle.loads(pickle.dumps(STABLEMAX)) is STABLEMAX


def test_ssmax_is_a_family_of_built_ins_named_by_the_number_of_tokens():
    K = T.get_link("ssmax-n4")
    assert K is T.get_link("ssmax-n4") is ssmax(4) and T.is_builtin(K) and pickle.loads(pickle.dumps(K)) is K
    a = [0.3, -0.1, 0.5]
    e = np.exp(math.log(4) * np.array(a))
    assert np.allclose([float(v) for v in K.phi(sp.Matrix(a))], e / e.sum(), rtol=1e-14)
    assert K.shift_invariant and not K.same_definition(T.LINKS["softmax"])
    assert ssmax(4, scale=sp.Rational(1, 2)).name == "ssmax-n4-s1_2" and not T.is_builtin(ssmax(4, scale=0.5))
    # the scale depends on n, so a bare name, n < 2 or a non-canonical number is refused, with the reason
    for bad in ("ssmax", "ssmax-n1", "ssmax-n04", "ssmax-n"):
        with pytest.raises(InvalidArgument, match="ssmax-n<N>"):
            T.get_link(bad)
    with pytest.raises(InvalidArgument, match="ssmax-n4"):
        T.get_link("ssmax")
    with pytest.raises(InvalidArgument, match="n="):
        ssmax(1)


def test_user_links_may_take_a_built_in_name_only_with_its_definition():
    same = T.Link("softmax1", h=sp.exp(sp.Symbol("q")), c=1)
    assert T.register(same) is same and T.get_link("softmax1") is SOFTMAX1  # a no-op: the name keeps its definition
    T.register(T.Link("ssmax-n3", h=sp.exp(sp.log(3) * x)))
    for bad in (T.Link("softmax1", h=sp.exp(x), c=2), T.Link("stablemax", h=x**2),
                T.Link("ssmax-n3", h=sp.exp(x)), T.Link("ssmax-n1", h=sp.exp(x))):
        with pytest.raises(InvalidArgument, match="shadow"):
            T.register(bad)
    # the control of the rule: a genuinely new name registers
    T.register(T.Link("softmax1-half", h=sp.exp(x), c=sp.Rational(1, 2)))
    assert T.get_link("softmax1-half").c == sp.Rational(1, 2)


def test_example_file_defines_new_user_links():
    defs = T.load_models_file(ROOT / "examples" / "sink_links.py")
    assert sorted(d.name for d in defs) == ["softmax2", "softplus-norm"]
    assert all(not T.is_builtin(d) and d.provenance == "U" for d in defs)
    assert T.get_link("softmax2").c == 2 and T.get_link("softplus-norm").smooth


def test_problem_and_backend_choice_read_smoothness_off_the_definitions():
    # logits away from the kinks at 0 (GBS, an extrapolation method, needs smoothness along the path)
    kw = dict(loss="logistic", V=[[1.0, 0.5, -0.2]], a=[1.0, 0.8, 1.2], target=[1.0])
    for name in ("stablemax", "softpick"):
        p = numerics.Problem(link=name, **kw)
        backend, why = resolve_backend(p)
        assert backend == "mpmath" and "not smooth" in why and name in why
        with pytest.raises(InvalidArgument, match="not allowed with backend='taylor'.*not smooth"):
            numerics.simulate(p, t_end=10, backend="taylor")
        tr = numerics.simulate(p, t_end=10, times=[10], backend="auto", dps=15)
        assert tr.backend == "mpmath" and any("auto -> mpmath" in s for s in tr.notes)
    for name in ("softmax1", "ssmax-n3"):  # smooth: Taylor when heyoka is there
        ok, why = taylor.suits(numerics.Problem(link=name, **kw))
        assert ok == taylor.available(), why


def test_cli_accepts_the_built_in_names_without_models(tmp_path):
    r = _cli("simulate", "--seed", "0", "--d", "2", "--n", "3", "--loss", "logistic", "--link", "softpick",
             "--a0", "ones_noise", "--t-end", "20", "--times", "0,20", "--backend", "numpy", "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["problem"]["link"] == "softpick" and len(out["times"]) == 2
    r = _cli("simulate", "--seed", "0", "--d", "2", "--n", "3", "--loss", "logistic", "--link", "ssmax",
             "--t-end", "20")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "ssmax-n<N>" in r.stderr
    r = _cli("simulate", "--help")
    assert "softmax1" in r.stdout and "ssmax-n<N>" in r.stdout


@pytest.mark.parametrize("name", ["softpick", "stablemax", "l1-norm", "relu-norm"])
def test_non_smooth_links_structured_jacobian_is_proven_case_by_case(name):
    from theorems import case_split_proofs, smooth_pieces

    K = T.get_link(name)
    pieces = smooth_pieces(K)
    assert [(lo, hi) for lo, hi, _ in pieces] == [(-sp.oo, 0), (0, sp.oo)]  # the kink at 0, derived
    for n in (2, 3):
        res = case_split_proofs(K, n)
        statuses = [r.status for _, r in res["proofs"]]
        # every product of pieces where the link is defined (relu-norm: not where every a_i < 0, Z = 0)
        assert len(res["proofs"]) == 4 + 2 ** n - len(res["undefined"]) and set(statuses) == {"proved"}
        assert res["undefined"] == ([" x ".join(["(-oo, 0)"] * n)] if name == "relu-norm" else [])
        bad = case_split_proofs(K, n, planted=True)  # the control: -phi k'^T dropped
        assert any(r.status == "disproved" for _, r in bad["proofs"])
    # softpick on the negative side: no weight, but a normalizer eps + sum |e^a - 1| that never vanishes
    if name == "softpick":
        assert pieces[0][2]["h"] == 0 and pieces[0][2]["k"] == 1 - sp.exp(x)


def test_case_split_refuses_what_it_cannot_derive_and_covers_smooth_links_in_one_piece():
    from theorems import case_split_proofs, smooth_pieces

    assert len(smooth_pieces(SOFTMAX1)) == 1
    assert {r.status for _, r in case_split_proofs(SOFTMAX1, 2)["proofs"]} == {"proved"}
    with pytest.raises(InvalidArgument, match="kinks cannot be derived"):
        case_split_proofs(T.Link("floor-norm", h=sp.floor(x) + 2), 2)
    with pytest.raises(InvalidArgument, match="elementwise"):
        case_split_proofs(T.LINKS["sigmoid"], 2)


def test_list_links_shows_the_built_ins_and_user_links():
    r = _cli("list", "--links", "--models", str(ROOT / "examples" / "sink_links.py"))
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split()[1:4] for line in r.stdout.splitlines()}
    assert rows["softmax1"] == ["D", "built-in", "smooth"] and rows["softpick"][:2] == ["D", "built-in"]
    assert rows["stablemax"][2:] == ["not"] and rows["softmax"] == ["P", "built-in", "smooth"]
    assert rows["softmax2"] == ["U", "user", "smooth"] and "ssmax-n<N>" in rows
    r = _cli("list")  # the claim registry, unchanged
    assert r.returncode == 0 and "SINK2" in r.stdout and "softpick" not in r.stdout.split("\n")[0]


def test_certify_refuses_the_sink_links_in_one_line(tmp_path):
    init = tmp_path / "init.json"
    init.write_text(json.dumps({"loss": "logistic", "link": "softmax1", "V": [[1.0, 0.5]], "a": [0.1, 0.0],
                                "target": [1.0]}))
    r = _cli("certify", "--init", str(init), "--out", str(tmp_path / "c.json"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "softmax" in r.stderr
    assert not (tmp_path / "c.json").exists()


@pytest.mark.slow
def test_check_model_on_softpick_compares_with_autograd_and_states_the_region():
    """softpick's h = max(e^x - 1, 0): the autograd reference used to fail (sympy prints Max as torch.max)."""
    import softpolar

    r = softpolar.check_model(link="softpick", loss="logistic")
    assert r.ok and all(row["ok"] for row in r.autograd) and r.autograd
    assert all(p["status"] == "proved" and "a_i > 0" in p["scope"] for p in r.proofs)


def test_claim_families_do_not_apply_where_their_start_has_no_weight(tmp_path):
    """The families start at a(0) = 0; softpick's h(0) = 0 (its kink), so every weight is 0 there: verify --link
    softpick says so at once (it used to integrate from the kink for minutes); stablemax (h(0) = 1) keeps them."""
    from proofs_check.claims import applicability

    assert not any(ok for _f, ok, _w in applicability("softpick", "logistic"))
    assert all(ok for f, ok, _w in applicability("stablemax", "logistic") if f != "partial" and f != "no_polarization")
    r = _cli("verify", "--link", "softpick", "--loss", "logistic", "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "h(0) = 0" in r.stderr
    assert not (tmp_path / "r").exists()
