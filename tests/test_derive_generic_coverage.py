"""derive --check on a user model claims a size-generic proof only where the generic prover covers the model.

Reviewer's case: a user quartic loss and a user link with c = 1 (softmax1's definition under another name) got
"proved (all n, d)" rows for loss.gradient, jacobian.structured and flow.structured, whose generic proofs know the
built-in losses and normalizers Z = sum_j h(a_j) only, and a functions.derivatives row although the definitions
use neither softplus nor sigmoid.
"""
from __future__ import annotations

import sympy as sp

from theorems import Link, Loss, run_identities, scope_report
from theorems import generic_coverage

x, u, y = sp.symbols("x u y", real=True)
QUART = Loss.separable("rma-quart", f=(u - y) ** 4 / 4, variables=(u, y))
SM1 = Link("rma-sm1", h=sp.exp(x), c=1)
EXP2 = Link("rma-exp2", h=sp.exp(2 * x))  # normalized, k = h, c = 0, smooth: an instance of the generic prover's h

IDS = ["functions.derivatives", "jacobian.structured", "loss.gradient", "flow.structured"]


def test_user_loss_and_link_with_c_get_no_size_generic_claim():
    rows = run_identities(IDS, ns=[2, 3], jobs=1, loss=QUART, link=SM1)
    generic = {r.id: r for r in rows if r.n is None}
    concrete = [r for r in rows if r.n is not None]
    # the concrete proofs ran and hold, at the sizes they name
    assert {r.id for r in concrete} == {"jacobian.structured", "loss.gradient", "flow.structured"}
    assert all(r.holds and r.negative_status == "disproved" for r in concrete)
    assert set(generic) == {"jacobian.structured", "loss.gradient", "flow.structured"}
    for r in generic.values():
        assert r.status == "not covered" and r.generic_label == "not covered", r
        assert r.scope == "" and r.assumptions == () and r.passed
        assert "all n, d" not in r.detail
    assert "built-in losses only" in generic["loss.gradient"].detail
    assert "c != 0" in generic["jacobian.structured"].detail
    assert "built-in losses only" in generic["flow.structured"].detail
    # the sizes the concrete checks did run at are named
    assert "(n = 2..3: d = 1)" in generic["jacobian.structured"].detail
    assert "(n = 2..3: d = 1,2)" in generic["flow.structured"].detail
    # functions.derivatives does not apply: the definitions use neither softplus nor sigmoid (as derive says)
    assert "functions.derivatives" not in {r.id for r in rows}
    assert "neither softplus nor sigmoid" in scope_report(IDS, QUART, SM1)["functions.derivatives"]


def test_a_covered_user_link_keeps_its_size_generic_proof():
    assert generic_coverage(EXP2, "square")[0] and not generic_coverage(SM1, "square")[0]
    rows = run_identities(["jacobian.structured"], ns=[2], jobs=1, link=EXP2)
    generic = [r for r in rows if r.n is None]
    assert len(generic) == 1 and generic[0].status == "proved" and generic[0].scope == "all n, d"
    assert generic[0].generic_label == "proved (all n, d)"


def test_an_unrestricted_run_is_unchanged():
    rows = run_identities(["functions.derivatives"], ns=[2], jobs=1)
    assert [(r.id, r.n is None, r.status) for r in rows] == [("functions.derivatives", False, "proved"),
                                                            ("functions.derivatives", True, "proved")]


def test_derive_check_counts_the_rows_not_covered(tmp_path, capsys):
    """The footer and the JSON summary of derive --check count the size-generic rows not covered (they said
    '0 proved (all n, d), 0 undecided, 0 disproved' for the reviewer's case)."""
    import json

    from softpolar import main

    m = tmp_path / "m.py"
    m.write_text("import sympy as sp\nfrom theorems import Link\nx = sp.Symbol('x', real=True)\n"
                 "sm1 = Link('rma-cli-sm1', h=sp.exp(x), c=1)\n")
    args = ["derive", "--check", "--models", str(m), "--link", "rma-cli-sm1", "--only", "jacobian.structured"]
    assert main([*args, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["generic_not_covered"] == ["jacobian.structured"]
    assert main(args) == 0
    assert "1 not covered (no size-generic claim)" in capsys.readouterr().out
