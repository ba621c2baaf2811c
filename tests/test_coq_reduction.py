"""Reduction.v: the (V, a) -> (u, a) reduction for every n, d in Coq (issue 37, item 2). It is built with the
development, rests on the classical-reals axioms only, and a planted wrong statement (the factor b doubled, the
clock's sign flipped) with the same proof script is refused by Coq while the true one compiles."""
import re

import pytest

from theorems import coq

needs_coq = pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")


def test_reduction_is_in_the_build_and_its_theorems_are_printed():
    names = coq.sources()
    assert names.index("Trapping.v") < names.index("Polarization.v") < names.index("Reduction.v") \
        < names.index("Assumptions.v")
    printed = re.findall(r"^Print Assumptions (\w+)\.", (coq.COQ_DIR / "Assumptions.v").read_text(), re.M)
    assert tuple(printed) == coq.MAIN_THEOREMS
    assert set(coq.REDUCTION_THEOREMS) <= set(coq.MAIN_THEOREMS)
    text = (coq.COQ_DIR / "Reduction.v").read_text()
    for name in coq.REDUCTION_THEOREMS:
        assert re.search(rf"^(Theorem|Corollary) {name} :", text, re.M), name


def test_the_template_states_the_theorem_of_the_file():
    # the control's true statement is Reduction.reduction's, word for word (up to white space)
    text = (coq.COQ_DIR / "Reduction.v").read_text()
    stated = re.search(r"Theorem reduction :(.*?)\.\nProof\.", text, re.S).group(1)
    assert stated.split() == coq.REDUCTION_STATEMENT.format(**coq.REDUCTION_TRUE).replace(
        "(logistic_clock)", "logistic_clock").split()


@pytest.mark.slow
@needs_coq
def test_reduction_axioms_and_planted_wrong_statements(tmp_path):
    dev = coq.build(tmp_path / "b")
    assert dev.ok, [r.output for r in dev.runs if not r.ok]
    for name in coq.REDUCTION_THEOREMS:
        assert set(dev.assumptions[name]) <= set(coq.STDLIB_REAL_AXIOMS), (name, dev.assumptions[name])
    good = coq.check_text(coq.REDUCTION_TEMPLATE.format(**coq.REDUCTION_TRUE), "ReductionTrue", dev=dev)
    assert good.ok, good.output
    for kind, wrong in coq.REDUCTION_WRONG.items():
        bad = coq.check_text(coq.REDUCTION_TEMPLATE.format(**wrong), "ReductionWrong_" + kind.replace(" ", "_"),
                             dev=dev)
        assert not bad.ok, kind
        assert "Error" in bad.output, (kind, bad.output)
