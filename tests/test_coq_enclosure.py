"""Enclosure.v: the generic a-priori enclosure step (issue 37), compiled, on the allowed axioms, and able to fail."""
import pytest

from theorems import coq

needs_coq = pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")


def test_enclosure_is_in_the_build_after_calculus():
    names = coq.sources()
    assert names.index("Calculus.v") < names.index("Enclosure.v") < names.index("Assumptions.v")


@needs_coq
def test_enclosure_compiles_on_the_allowed_axioms(tmp_path):
    res = coq.build(tmp_path / "b", upto="Enclosure.v")
    assert res.ok, [r.output for r in res.runs if not r.ok]
    probe = res.folder / "Probe.v"
    probe.write_text("From Softpolar Require Import Enclosure.\nPrint Assumptions enclosure_step_autonomous.\n")
    run = coq.run_coqc(probe, res.folder)
    assert run.ok, run.output
    (axs,) = coq.parse_assumptions(run.output)
    assert axs and set(axs) <= set(coq.STDLIB_REAL_AXIOMS)        # not even the existence axiom


@needs_coq
def test_enclosure_without_strict_inclusion_does_not_prove(tmp_path):
    # negative control: asking only B + [0,h] f(E) inside the closed E (<=, not <) leaves the continuation step
    # (the open condition persists to the right) unprovable, so the same proof script must fail
    old = "El k < Bl k + h * Rmin 0 (fl k) /\\ Bu k + h * Rmax 0 (fu k) < Eu k.\n\n(** While"
    new = "El k <= Bl k + h * Rmin 0 (fl k) /\\ Bu k + h * Rmax 0 (fu k) <= Eu k.\n\n(** While"
    res = coq.build(tmp_path / "b", upto="Enclosure.v", patch={"Enclosure.v": (old, new)})
    assert not res.ok and res.runs[-1].file == "Enclosure.v"
