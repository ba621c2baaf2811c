"""Reduction.v, NoCrossing.v and Rates.v (issue 37, items 2 and 3): the (V, a) -> (u, a) reduction for every n, d,
no-crossing and the leading term u_i ~ b tau, in Coq. They are built with the development and rest on the
classical-reals axioms only; a planted wrong statement (b doubled, the clock's sign flipped; the a-order strict
already at t0; the limit 2b) with the same proof script is refused by Coq while the true one compiles."""
import re

import pytest

from theorems import coq

needs_coq = pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")


def test_reduction_is_in_the_build_and_its_theorems_are_printed():
    names = coq.sources()
    assert names.index("Trapping.v") < names.index("Polarization.v") < names.index("Reduction.v") \
        < names.index("NoCrossing.v") < names.index("Rates.v") < names.index("Assumptions.v")
    printed = re.findall(r"^Print Assumptions (\w+)\.", (coq.COQ_DIR / "Assumptions.v").read_text(), re.M)
    assert tuple(printed) == coq.MAIN_THEOREMS
    for file, names in (("Reduction.v", coq.REDUCTION_THEOREMS), ("NoCrossing.v", coq.NO_CROSSING_THEOREMS),
                        ("Rates.v", coq.RATE_THEOREMS)):
        assert set(names) <= set(coq.MAIN_THEOREMS)
        text = (coq.COQ_DIR / file).read_text()
        for name in names:
            assert re.search(rf"^(Theorem|Corollary) {name} :", text, re.M), name


def test_the_template_states_the_theorem_of_the_file():
    # the control's true statement is Reduction.reduction's, word for word (up to white space)
    text = (coq.COQ_DIR / "Reduction.v").read_text()
    stated = re.search(r"Theorem reduction :(.*?)\.\nProof\.", text, re.S).group(1)
    assert stated.split() == coq.REDUCTION_STATEMENT.format(**coq.REDUCTION_TRUE).replace(
        "(logistic_clock)", "logistic_clock").split()
    text = (coq.COQ_DIR / "NoCrossing.v").read_text()
    stated = re.search(r"Theorem no_crossing :(.*?)\.\nProof\.", text, re.S).group(1)
    assert stated.split() == coq.NO_CROSSING_STATEMENT.format(**coq.NO_CROSSING_TRUE).split()
    text = (coq.COQ_DIR / "Rates.v").read_text()
    stated = re.search(r"Theorem u_top_leading :(.*?)\.\nProof\.", text, re.S).group(1)
    assert stated.split() == coq.RATE_STATEMENT.format(**coq.RATE_TRUE).replace("(b)", "b").split()


@pytest.mark.slow
@needs_coq
def test_reduction_axioms_and_planted_wrong_statements(tmp_path):
    dev = coq.build(tmp_path / "b")
    assert dev.ok, [r.output for r in dev.runs if not r.ok]
    for name in coq.REDUCTION_THEOREMS + coq.NO_CROSSING_THEOREMS + coq.RATE_THEOREMS:
        assert set(dev.assumptions[name]) <= set(coq.STDLIB_REAL_AXIOMS), (name, dev.assumptions[name])
    good = coq.check_text(coq.REDUCTION_TEMPLATE.format(**coq.REDUCTION_TRUE), "ReductionTrue", dev=dev)
    assert good.ok, good.output
    for kind, wrong in coq.REDUCTION_WRONG.items():
        bad = coq.check_text(coq.REDUCTION_TEMPLATE.format(**wrong), "ReductionWrong_" + kind.replace(" ", "_"),
                             dev=dev)
        assert not bad.ok, kind
        assert "Error" in bad.output, (kind, bad.output)
    good = coq.check_text(coq.NO_CROSSING_TEMPLATE.format(**coq.NO_CROSSING_TRUE), "NoCrossingTrue", dev=dev)
    assert good.ok, good.output
    for kind, wrong in coq.NO_CROSSING_WRONG.items():
        bad = coq.check_text(coq.NO_CROSSING_TEMPLATE.format(**wrong), "NoCrossingWrong_" + kind.replace(" ", "_"),
                             dev=dev)
        assert not bad.ok and "Error" in bad.output, (kind, bad.output)
    good = coq.check_text(coq.RATE_TEMPLATE.format(**coq.RATE_TRUE), "RateTrue", dev=dev)
    assert good.ok, good.output
    for kind, wrong in coq.RATE_WRONG.items():
        bad = coq.check_text(coq.RATE_TEMPLATE.format(**wrong), "RateWrong_" + kind, dev=dev)
        assert not bad.ok and "Error" in bad.output, (kind, bad.output)
