"""Rate laws derived from an optimizer's flow (theorems.asymptotics.optimizer_rate_law) and their settled check in
the optimizer's own time (proofs_check.claims._optim_settle): derivations, NoLaw reasons, near misses refused."""
import json

import numpy as np
import pytest
import sympy as sp

from theorems import Link
from theorems import optimizers as O
from theorems.asymptotics import Law, NoLaw, asymptotics, b, n, optimizer_rate_law

x = sp.Symbol("x", real=True)
T3 = Link("softmax-T3-optlaw", h=sp.exp(x / 3))


@pytest.fixture(autouse=True)
def _scope():
    """The user optimizers defined by these tests live in the test only."""
    with O.optimizer_scope():
        yield


def test_gradient_flow_and_its_constant_multiples_get_gradient_flows_law():
    triple = O.Optimizer("gd-times-3-optlaw", flow={O.theta: -3 * O.g}, step=[(O.theta, O.theta - O.lr * O.g)])
    for opt in (O.GD, triple):
        law = optimizer_rate_law("logistic", "softmax", opt)
        assert isinstance(law, Law) and law.clock == "log t" and law.exponent == 2
        assert sp.simplify(law.constant - 2 * b * (n - 1) / n) == 0


def test_normalized_flow_law_is_on_the_arc_length_clock_and_scales_with_the_temperature():
    law = optimizer_rate_law("logistic", "softmax", O.NGD)
    assert law.clock == "t" and law.exponent == 2 and sp.simplify(law.constant - 2 * (n - 1) / n) == 0
    hot = optimizer_rate_law("logistic", T3, O.NGD)
    assert sp.simplify(hot.constant - 2 * (n - 1) * 9 / n) == 0  # lambda = 1/3: C = 2(n-1)/(n lambda^2)


def test_sign_flow_law_exponent_from_the_speeds_and_the_tail_rate():
    law = optimizer_rate_law("logistic", "softmax", O.SIGN)
    assert law.clock == "exp t" and law.exponent == 2
    assert sp.simplify(optimizer_rate_law("logistic", T3, O.SIGN).exponent - sp.Rational(2, 3)) == 0
    entry = law.to_json()
    assert entry["constant"] is None and "transient" in entry["no_constant"]
    # a sign flow at half speed on the logits: the exponent follows the flow, not the name
    half = O.Optimizer.blockwise("sign-half-optlaw", V=O.SIGN.rules["V"],
                                 a=O.Rule(flow={O.theta: -sp.sign(O.g) / 2},
                                          step=[(O.theta, O.theta - O.lr * sp.sign(O.g) / 2)]))
    assert optimizer_rate_law("logistic", "softmax", half).exponent == 1


def test_adam_law_is_gradient_flows_in_its_stated_regime_and_eps_zero_has_none():
    law = optimizer_rate_law("logistic", "softmax", O.ADAM)
    assert law.clock == "log t" and sp.simplify(law.constant - 2 * b * (n - 1) / n) == 0
    assert any("regime" in s and "1e+08" in s for s in law.steps)
    m, v = O.ADAM.states("V")
    no_eps = O.Optimizer("adam-no-eps-optlaw", state={m: 0, v: 0}, hyper={O.beta1: 0.9, O.beta2: 0.999},
                         flow={m: -sp.log(O.beta1) / O.lr * (O.g - m), v: -sp.log(O.beta2) / O.lr * (O.g**2 - v),
                               O.theta: -(m / (1 - O.beta1 ** (O.t / O.lr)))
                               / sp.sqrt(v / (1 - O.beta2 ** (O.t / O.lr)))},
                         step=[(m, m), (v, v), (O.theta, O.theta - O.lr * m)])
    out = optimizer_rate_law("logistic", "softmax", no_eps)
    assert isinstance(out, NoLaw) and out.step == "quasi-static", out


def test_no_law_names_the_step():
    muon = optimizer_rate_law("logistic", "softmax", O.MUON)
    assert isinstance(muon, NoLaw) and muon.step == "clock" and "different" not in muon.reason
    cubic = O.Optimizer("g-abs-g-optlaw", flow={O.theta: -O.g * sp.Abs(O.g)}, step=[(O.theta, O.theta - O.lr * O.g)])
    out = optimizer_rate_law("logistic", "softmax", cubic)
    assert isinstance(out, NoLaw) and "size of g" in out.reason
    entries = asymptotics("logistic", "softmax", optimizer="muon")
    assert json.loads(json.dumps(entries))[0]["exponent"] is None


# ---- the settled comparison in t, on runs fixed in advance -------------------------------------------------------
def _fixed(law):
    from proofs_check.claims import t_grid

    def run(T):
        t = np.array([float(s) for s in t_grid(T, "t")[1:]])
        return {"t": t, "q": law(t), "constant": None}
    return run


def _settle(law, C, exponent=2.0):
    from proofs_check.claims import settle_in_t
    return settle_in_t(_fixed(law), exponent=exponent, constant=C, clock="t", horizons=(1000, 3000, 10000))


def test_settle_in_t_verifies_a_law_with_1_over_t_corrections_and_refuses_the_1_percent_near_miss():
    def law(t):
        return 1.75 / t**2 * (1 + 17 / t - 40 / t**2)
    assert _settle(law, 1.75)["verdict"] == "verified"
    assert _settle(law, 1.75 * 1.01)["verdict"] == "refuted"
    assert _settle(law, 1.75, exponent=2.02)["verdict"] == "refuted"


def test_settle_in_t_never_verifies_a_drifting_law():
    r = _settle(lambda t: 1.75 * np.log(t) / t**2, 1.75)
    assert r["verdict"] != "verified", r["why"]


def test_settle_in_t_exp_clock_takes_the_state_constant():
    from proofs_check.claims import settle_in_t, t_grid

    def run(T):
        t = np.array([float(s) for s in t_grid(T, "exp t")[1:]])
        S = 0.3 * np.exp(-2 * t)
        return {"t": t, "q": S / (1 + S), "constant": 0.3}
    assert settle_in_t(run, exponent=2.0, constant=None, clock="exp t", horizons=(6, 8, 10))["verdict"] == "verified"
    out = settle_in_t(run, exponent=2.02, constant=None, clock="exp t", horizons=(6, 8, 10))
    assert out["verdict"] == "refuted" and not out["exponent_ok"]


def test_derive_optimizer_asymptotics_json(capsys):
    from softpolar import main

    assert main(["derive", "--optimizer", "sign", "--asymptotics", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (entry,) = out["asymptotics"]
    assert out["optimizer"] == "sign" and entry["clock"] == "exp t" and sp.sympify(entry["exponent"]) == 2


def test_sign_rate_claim_and_family_record():
    pytest.importorskip("torch")  # the Filippov engine's Hessian-vector products
    from proofs_check import Context
    from proofs_check.claims import family_claims

    ctx = Context()
    rec = {c.id: c for c in family_claims("softmax", "logistic", optimizer="sign")}["OPTF.rate[sign,logistic,softmax]"]
    assert rec.check(ctx).verdict == "verified"
    assert rec.control.run(ctx).verdict == "refuted"


# ---- verify --optimizer X --claims ... (the selection of plain verify) -----------------------------------------
def test_verify_optimizer_honors_claims(capsys, tmp_path):
    from softpolar import main

    rc = main(["verify", "--optimizer", "muon", "--claims", "OPTF.winner[muon,logistic,softmax]", "--out",
               str(tmp_path / "one")])
    out = capsys.readouterr().out
    assert "OPTF.winner[muon,logistic,softmax]" in out and "OPTF.polarizes" not in out and "1/1" in out, out
    assert rc == 1  # Muon does not polarize: no winner (a finding, not a crash)


@pytest.mark.parametrize("claims, needle", [
    ("OPTF.winer[muon,logistic,softmax]", "did you mean OPTF.winner[muon,logistic,softmax]"),
    ("C01", "is not a claim of --optimizer muon"),
    ("OPTF.winner[muon,logistic", "never closed"),
])
def test_verify_optimizer_refuses_unknown_ids_in_one_line(capsys, tmp_path, claims, needle):
    from softpolar import main

    rc = main(["verify", "--optimizer", "muon", "--claims", claims, "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_ngd_rate_family_record_settles():
    from proofs_check import Context
    from proofs_check.claims import family_claims

    ctx = Context()
    rec = {c.id: c for c in family_claims("softmax", "logistic", optimizer="ngd")}["OPTF.rate[ngd,logistic,softmax]"]
    assert rec.check(ctx).verdict == "verified"
    assert rec.control.run(ctx).verdict == "refuted"
