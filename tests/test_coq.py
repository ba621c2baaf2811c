"""The Coq development (theorems/coq): shipped, free of admits, its SymPy part up to date, and (with coqc) it
compiles with only the allowed axioms, and Coq refuses the false variant of the trapping statement."""
import configparser
import re
from pathlib import Path

import pytest

from theorems import coq
from theorems.coq import emit

ROOT = Path(__file__).resolve().parent.parent
needs_coq = pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")


def test_every_source_is_present_next_to_the_module():
    # run from an installed wheel this checks the package data; from the checkout, the _CoqProject list
    assert coq.sources()[0] == "Calculus.v" and coq.sources()[-1] == "Assumptions.v"
    for f in coq.sources():
        assert (coq.COQ_DIR / f).is_file(), f
    assert sorted(p.name for p in coq.COQ_DIR.glob("*.v")) == sorted(coq.sources())


def test_setup_cfg_ships_the_sources_as_package_data():
    cfg = ROOT / "setup.cfg"
    if not cfg.is_file():
        pytest.skip("no setup.cfg next to the tests")
    parser = configparser.ConfigParser()
    parser.read(cfg)
    patterns = [p.strip() for p in parser["options.package_data"]["theorems.coq"].split(",")]
    assert "*.v" in patterns and "_CoqProject" in patterns


def test_no_admits_and_one_axiom():
    text = {f: (coq.COQ_DIR / f).read_text() for f in coq.sources()}
    for f, t in text.items():
        code = re.sub(r"\(\*.*?\*\)", "", t, flags=re.S)   # comments may mention the words
        assert not re.search(r"\b(Admitted|admit|Abort)\b", code), f
        assert not re.search(r"\b(Parameter|Conjecture|Hypothesis|Variable)\b", code) or f in (
            "Softmax.v", "Trapping.v", "Enclosure.v", "Reduction.v", "NoCrossing.v"), f  # Section variables only
    axioms = [(f, m) for f, t in text.items()
              for m in re.findall(r"^\s*Axiom\s+(\w+)", re.sub(r"\(\*.*?\*\)", "", t, flags=re.S), re.M)]
    assert axioms == [("Polarization.v", coq.EXISTENCE_AXIOM)]


def test_section_hypotheses_are_closed():
    # every Section opened is closed, so no Hypothesis/Variable survives as an assumption
    for f in coq.sources():
        t = (coq.COQ_DIR / f).read_text()
        assert len(re.findall(r"^Section (\w+)\.", t, re.M)) == len(re.findall(r"^End (\w+)\.", t, re.M)), f


def test_generated_file_is_what_sympy_emits():
    assert emit.SIZES == (3, 4) and emit.check_generated()
    assert {f"Generated_n{n}.v" for n in emit.SIZES} <= set(coq.sources())
    text = emit.emit_generated()
    # the emitted certificates are the ones theorems.trapping proves: all coefficients non-negative
    *_, certs = emit.certificates(3)
    assert len(certs) == 4
    for name, _var, _j, pn, pd, _variables, _positive in certs:
        assert all(c >= 0 for c in pn.coeffs()) and all(c > 0 for c in pd.coeffs()), name
        assert f"Lemma {name}_nonneg" in text and f"Lemma {name}_matches" in text


def test_a_stale_generated_file_is_detected(tmp_path, monkeypatch):
    fake = tmp_path / "Generated_n3.v"
    fake.write_text(emit.emit_generated().replace("(2 * r2)", "(3 * r2)", 1))
    real = emit.generated_path
    monkeypatch.setattr(emit, "generated_path", lambda n=3: fake if n == 3 else real(n))
    assert not emit.check_generated() and not emit.check_generated(3) and emit.check_generated(4)


def test_parse_assumptions():
    text = ("Axioms:\nClassicalDedekindReals.sig_not_dec : forall P : Prop, {~ ~ P} + {~ P}\n"
            "reduced_flow_global_existence\n  : forall n : nat,\n    0 < n\nAxioms:\nFoo.bar : True\n")
    assert coq.parse_assumptions(text) == [["ClassicalDedekindReals.sig_not_dec", "reduced_flow_global_existence"],
                                           ["Foo.bar"]]
    assert coq.parse_assumptions("Closed under the global context\n") == [[]]


def test_parse_assumptions_keeps_what_coq_reports_in_words():
    # failed before: these lines were dropped, so a theorem resting on an unchecked fixpoint read as closed
    text = ("Axioms:\nM.loop is assumed to be guarded.\nAxioms:\nM.bad is assumed to be positive.\n"
            "Axioms:\nM.tt relies on an unsafe hierarchy.\nClassical_Prop.classic : forall P : Prop, P \\/ ~ P\n"
            "Closed under the global context\n")
    blocks = coq.parse_assumptions(text)
    assert blocks == [["M.loop is assumed to be guarded."], ["M.bad is assumed to be positive."],
                      ["M.tt relies on an unsafe hierarchy.", "Classical_Prop.classic"], []]
    res = coq.BuildResult(Path("."), assumptions=dict(zip(coq.MAIN_THEOREMS, blocks)))
    assert res.disallowed_axioms() == {"softpolar_trapping": ["M.loop is assumed to be guarded."],
                                       "softpolar_polarization": ["M.bad is assumed to be positive."],
                                       "reduction": ["M.tt relies on an unsafe hierarchy."]}


@pytest.mark.slow
@needs_coq
def test_development_builds_with_only_the_allowed_axioms(tmp_path):
    res = coq.build(tmp_path / "b")
    assert res.ok, [r.output for r in res.runs if not r.ok]
    assert set(res.assumptions) == set(coq.MAIN_THEOREMS)
    assert coq.EXISTENCE_AXIOM not in res.assumptions["softpolar_trapping"]
    assert coq.EXISTENCE_AXIOM in res.assumptions["softpolar_polarization"]
    assert res.disallowed_axioms() == {}
    # the check can fail: a file with an extra axiom is reported
    run = coq.check_text("Axiom extra : False.\nTheorem t : 0 = 1. Proof. destruct extra. Qed.\n"
                         "Print Assumptions t.\n", "Extra", dev=res)
    assert run.ok and coq.parse_assumptions(run.output) == [["extra"]]
    # the control: convergence from the closed region (ties) is refused; the strict region compiles
    bad = coq.check_text(coq.REGION_TEMPLATE.format(region="in_R"), "ControlTies", dev=res)
    good = coq.check_text(coq.REGION_TEMPLATE.format(region="in_Rplus"), "WitnessStrict", dev=res)
    assert not bad.ok and "in_R" in bad.output
    assert good.ok, good.output
    # the refutation in the development is of exactly the control's statement (and not of the true one)
    assert coq.check_text(coq.REFUTATION_TEMPLATE.format(region="in_R"), "Refuted", dev=res).ok
    assert not coq.check_text(coq.REFUTATION_TEMPLATE.format(region="in_Rplus"), "NotRefuted", dev=res).ok


def test_build_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        coq.build(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"
