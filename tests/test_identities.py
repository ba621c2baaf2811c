"""The identity registry: every identity holds, every negative control is disproved.

Default run: n = 2 and 3 with the smallest scheduled d per loss (fast). The full
n = 2..6 grid (as ``softpolar derive --check``) is ``@pytest.mark.slow``.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from theorems import IDENTITIES, Identity, IdentityResult, InvalidArgument, SymbolicModel, get_identity, \
    run_identities
from theorems import combine, decide, exact_zero
from theorems import ProofResult

from .helpers import assert_close

STABLE_IDS = {
    "functions.derivatives", "shift_invariance.softmax", "jacobian.softmax", "jacobian.structured",
    "jacobian.properties", "loss.gradient", "flow.structured", "replicator", "attention.dynamics",
    "sum_a.conserved", "balance.per_token", "logistic.orthogonal_fixed", "square.rank_one",
    "two_token.first_integral", "output.dynamics", "entropy.rate", "reduced.logistic", "clock.logistic",
    "clock.square_rank_one",
}
#: identities specific to one size, and their generic scope
SIZE_SPECIFIC = {"two_token.first_integral": "n = 2 only"}


def _min_d_cases(ident: Identity, n: int):
    """(loss, smallest scheduled d) pairs at n."""
    out = []
    for loss in ident.losses:
        ds = (1,) if ident.d_values is None else ident.d_values(loss, n)
        if ds:
            out.append((loss, min(ds)))
    return out


# ---- registry ---------------------------------------------------------------------------------
def test_registry_ids_are_stable():
    assert set(IDENTITIES) == STABLE_IDS
    for key, ident in IDENTITIES.items():
        assert ident.id == key
        assert ident.negative, key
        assert set(ident.provenance.split("/")) <= set("PCADRIM"), ident.provenance
        assert ident.statement.count("{") == ident.statement.count("}"), key
        assert ident.statement.count(r"\left") == ident.statement.count(r"\right"), key


def test_get_identity_rejects_unknown_id():
    with pytest.raises(InvalidArgument, match="identity='nope'"):
        get_identity("nope")


def test_provenance_of_the_papers_typo_and_sign_are_recorded():
    assert "A" in IDENTITIES["output.dynamics"].provenance
    assert "square" in IDENTITIES["output.dynamics"].note and "typo" in IDENTITIES["output.dynamics"].note
    assert r"$+\gamma$" in IDENTITIES["reduced.logistic"].note and r"$-\gamma$" in IDENTITIES["reduced.logistic"].note


# ---- identities at small n -------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("identity_id", sorted(STABLE_IDS))
def test_identity_holds_and_control_is_disproved(identity_id, n):
    ident = IDENTITIES[identity_id]
    if not ident.applies(n):
        pytest.skip(f"{identity_id} does not apply at n={n}")
    for loss, d in _min_d_cases(ident, n):
        res = ident.check(n, d, loss=loss)
        assert res.status == "proved", (loss, d, res)
        neg = ident.negative_control(n, d, loss=loss)
        assert neg.status == "disproved", (loss, d, neg)
        assert neg.counterexample, "a disproof carries its counterexample point"


def test_run_identities_rows_in_process():
    rows = run_identities(["jacobian.softmax", "two_token.first_integral"], ns=[2, 3], jobs=1)
    assert [(r.id, r.n) for r in rows] == [
        ("jacobian.softmax", 2), ("jacobian.softmax", 3), ("jacobian.softmax", None),
        ("two_token.first_integral", 2), ("two_token.first_integral", None),
    ]
    assert all(isinstance(r, IdentityResult) and r.passed for r in rows)
    assert rows[0].to_dict()["passed"] is True
    assert rows[2].status == "proved" and rows[2].negative_status == "disproved"
    assert rows[2].generic_label == "proved (all n, d)" and rows[0].generic_label == ""
    assert rows[4].generic_label == "proved (n = 2 only)"
    assert rows[4].uses == ("reduced.logistic", "clock.square_rank_one")
    assert rows[4].to_dict()["uses"] == ["reduced.logistic", "clock.square_rank_one"]


def test_run_identities_validates_input():
    with pytest.raises(InvalidArgument, match="n=1"):
        run_identities(["jacobian.softmax"], ns=[1])
    with pytest.raises(InvalidArgument, match="identity="):
        run_identities(["no.such.identity"])
    with pytest.raises(InvalidArgument, match="jobs=0"):
        run_identities(["jacobian.softmax"], jobs=0)


@pytest.mark.slow
def test_full_grid_n2_to_6_in_parallel():
    rows = run_identities(ns=range(2, 7), jobs=2)
    bad = [r for r in rows if not r.passed]
    assert not bad, bad
    concrete = [r for r in rows if r.n is not None]
    assert all(r.status == "proved" and r.negative_status == "disproved" for r in concrete)
    for ident in IDENTITIES.values():
        ns = {r.n for r in concrete if r.id == ident.id}
        assert ns == ({2} if ident.size_free or ident.n_values == (2,) else {2, 3, 4, 5, 6}), ident.id


# ---- size-generic proofs ---------------------------------------------------------------------------
@pytest.mark.parametrize("identity_id", sorted(STABLE_IDS))
def test_generic_proof_holds_for_every_size(identity_id):
    from theorems import run_generic
    ident = IDENTITIES[identity_id]
    res = run_generic(identity_id, -1)[2]  # ident.generic(), memoized for the other tests of this process
    assert res.status == "proved", res
    assert ident.generic_scope == SIZE_SPECIFIC.get(identity_id, "all n, d")
    assert ident.generic_method and ident.generic_note
    assert set(ident.generic_uses) <= STABLE_IDS - {identity_id}


@pytest.mark.parametrize("identity_id", sorted(STABLE_IDS))
def test_generic_negative_controls_are_disproved(identity_id):
    ident = IDENTITIES[identity_id]
    assert ident.generic_negative, "every generic proof has a generic negative control"
    from theorems import run_generic
    for k, (desc, _) in enumerate(ident.generic_negative):
        res = run_generic(identity_id, k)[2]
        assert res.status == "disproved", (desc, res)


def test_generic_rows_pass_and_record_uses_and_assumptions():
    from theorems import generic_rows
    rows = {r.id: r for r in generic_rows(["replicator"])}
    r = rows["replicator"]
    assert r.n is None and r.passed and r.status == "proved" and r.negative_status == "disproved"
    assert r.uses == ("flow.structured",) and any("in range" in x for x in r.assumptions)


def test_generic_proof_with_an_unproved_dependency_is_undecided(monkeypatch):
    from dataclasses import replace

    from theorems import generic_rows
    broken = replace(IDENTITIES["reduced.logistic"],
                     generic=lambda: ProofResult("undecided", "index-nf", "planted: not decided"))
    monkeypatch.setitem(IDENTITIES, "reduced.logistic", broken)  # the door's IDENTITIES is the registry itself
    rows = {r.id: r for r in generic_rows(["two_token.first_integral"])}
    r = rows["two_token.first_integral"]
    assert r.status == "undecided" and "reduced.logistic (undecided)" in r.detail


def test_a_generic_control_that_holds_fails_the_row():
    # the planted bug under which a control would pass: the "wrong" variant is the identity itself
    ok = ProofResult("proved", "index-nf")
    row = IdentityResult("x", None, (), "proved", "index-nf", 0.0, "proved", "index-nf", "", "", "D", 1,
                         scope="all n, d")
    assert not row.control_ok and not row.passed
    assert combine([("a", ok), ("b", ProofResult("disproved", "m"))], negative=True).status == "proved"


# ---- the decision procedure ---------------------------------------------------------------------
def test_exact_zero_decides_rational_functions():
    x, y = sp.symbols("x y", positive=True)
    assert exact_zero([1 / (x + y) - x / (x * (x + y))])
    assert not exact_zero([1 / (x + y) - 1 / (y + x) + 1 / x ** 2])


def test_decide_pairs_exp_q_with_exp_minus_q():
    x, y = sp.symbols("x y", real=True)
    assert decide(sp.exp(x * y) * sp.exp(-x * y) - 1).status == "proved"


def test_decide_never_disproves_a_true_identity_hidden_by_opaque_atoms():
    # exp(y log x) becomes an opaque symbol, independent of x**y: the exact step fails, the point
    # evaluation (at the true values of the atoms) finds no counterexample, simplify proves it.
    x, y = sp.symbols("x y", positive=True)
    res = decide(sp.exp(y * sp.log(x)) - x ** y)
    assert (res.status, res.method) == ("proved", "simplify")
    # a negative control skips simplify: the same true identity then only holds numerically
    assert decide(sp.exp(y * sp.log(x)) - x ** y, negative=True).status == "numeric"


def test_decide_disproves_with_a_genuine_point():
    a1, a2 = sp.symbols("a_1 a_2", real=True)
    res = decide(sp.exp(a1) / (sp.exp(a1) + sp.exp(a2)) - sp.Rational(1, 2), negative=True)
    assert res.status == "disproved" and set(res.counterexample) == {"a_1", "a_2"}


def test_combine_worst_status_wins():
    ok, num, bad = ProofResult("proved", "m"), ProofResult("numeric", "m"), ProofResult("disproved", "m")
    assert combine([("a", ok), ("b", num)]).status == "numeric"
    assert combine([("a", ok), ("b", bad)]).status == "disproved"
    assert combine([("a", bad), ("b", bad)], negative=True).status == "disproved"
    assert combine([("a", bad), ("b", ok)], negative=True).status == "proved"


# ---- derivative guard: SymPy's matrix calculus pitfall, and our derivation vs autograd ------------
def test_sympy_matrix_calculus_pitfall_is_real():
    """diff of a scalar w.r.t. a MatrixSymbol silently returns 0 in SymPy 1.14: we never use it."""
    V = sp.MatrixSymbol("V", 2, 2)
    b = sp.Matrix(sp.symbols("b1:3"))
    s = sp.Matrix(sp.symbols("s1:3"))
    wrong = sp.diff((b.T * V * s)[0, 0], V)
    Vx = sp.Matrix(2, 2, sp.symbols("v1:5"))
    right = sp.Matrix(2, 2, lambda i, j: sp.diff((b.T * Vx * s)[0, 0], Vx[i, j]))
    assert sp.Matrix(wrong).is_zero_matrix  # a ZeroMatrix: the true gradient b s^T is lost
    assert (right - b * s.T).is_zero_matrix and not (b * s.T).is_zero_matrix


@pytest.mark.parametrize("loss", ["logistic", "square", "kl"])
@pytest.mark.parametrize("link", ["softmax", "sigmoid", "l2-norm"])
def test_componentwise_derivation_matches_torch_autograd(loss, link, rng):
    torch = pytest.importorskip("torch")
    n, d = 3, 2
    m = SymbolicModel(loss, link, n, d)
    dV, da = m.flow()
    syms = list(m.V) + list(m.a) + list(m.target)
    V = rng.normal(size=(d, n))
    a = rng.normal(size=n)
    target = rng.dirichlet(np.ones(d)) if loss == "kl" else rng.normal(size=d)
    f = sp.lambdify(syms, [dV, da], modules="mpmath")
    sdV, sda = f(*V.ravel(), *a, *target)
    sdV = np.array(sdV.tolist(), dtype=float)
    sda = np.array(sda.tolist(), dtype=float).ravel()

    Vt = torch.tensor(V, dtype=torch.float64, requires_grad=True)
    at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    tt = torch.tensor(target, dtype=torch.float64)
    h = {"softmax": lambda x: torch.softmax(x, 0), "sigmoid": torch.sigmoid,
         "l2-norm": lambda x: x ** 2 / (x ** 2).sum()}[link]
    beta = Vt @ h(at)
    if loss == "logistic":
        L = torch.nn.functional.softplus(-(tt @ beta))
    elif loss == "square":
        L = 0.5 * ((beta - tt) ** 2).sum()
    else:
        L = -(tt * torch.log_softmax(beta, 0)).sum()
    gV, ga = torch.autograd.grad(L, (Vt, at))
    assert_close(sdV, -gV, what="SymPy dV vs autograd")
    assert_close(sda, -ga, what="SymPy da vs autograd")
    with pytest.raises(AssertionError):  # the comparison has power: a flipped sign fails
        assert_close(-sda, -ga)
