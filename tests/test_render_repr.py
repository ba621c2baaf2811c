"""Notebook and API renderings: ``Derivation.to_latex``/``to_markdown`` and ``_repr_latex_`` on
``Derivation``, ``Claim`` and ``ClaimResult``."""
from __future__ import annotations

from proofs_check import derivation as _derivation
from proofs_check import TAG_LEGEND, TAGS, ClaimResult, Outcome
from proofs_check import registry
from proofs_check.report import to_latex, to_markdown


def test_derivation_methods_are_the_renderers():
    der = _derivation.build_derivation("square", "softmax", 2, 1, prove=False)
    assert der.to_latex() == to_latex(der) and der.to_markdown() == to_markdown(der)
    frag = der._repr_latex_()
    assert r"\documentclass" not in frag and frag.count("$$") % 2 == 0
    assert r"\begin{aligned}" in frag and r"\dot V_{1,2}" in frag


def test_claim_and_result_repr_latex():
    claim = registry()["C04"]
    text = claim._repr_latex_()
    assert text.startswith("C04 [") and f"$${claim.statement}$$" in text and "expected: verified" in text
    good = ClaimResult(claim, Outcome("verified", "e"), Outcome("refuted", "e", counterexample={"x": 1}), 1.25)
    bad = ClaimResult(claim, Outcome("verified", "e"), Outcome("verified", "e"), 1.25)
    assert "passed: verified" in good._repr_latex_() and "1.2 s" in good._repr_latex_()
    assert "FAILED" in bad._repr_latex_()  # a control that did not fail shows as a failure


def test_tag_legend_names_every_tag():
    assert set(TAG_LEGEND) == set(TAGS) and all(TAG_LEGEND.values())
