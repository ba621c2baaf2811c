"""``python -m theorems.coq check FILE.v`` vouches only for what it verified: the file compiles, and neither its
text nor any of its declarations' ``Print Assumptions`` goes beyond the allowed axioms (no Admitted, no new
Axiom, no disabled guard, positivity or universe checking)."""
import re
import shutil
from pathlib import Path

import pytest

from numerics.validated.coq_emit import HEADER, region_block
from theorems import coq
from theorems.coq.__main__ import main

REVIEW = Path("/tmp/review-trust")
needs_coq = pytest.mark.skipif(coq.coqc_path() is None, reason=f"coqc not installed ({coq.APT_COMMAND})")

#: a closure as ``certify --coq`` writes it (two tokens, winner 1), by the emitter itself
GOOD = HEADER + "\n" + region_block("cert", 2, 0, "3/2", "5/4", [0, "1/2"], [0, "0"])
_LEMMA = GOOD.index("Lemma cert_in_Rplus")
#: the proof of cert_in_Rplus (the step the reviewer replaced with Admitted)
PROOF = GOOD[GOOD.index("Proof.", _LEMMA):GOOD.index("Qed.", _LEMMA) + len("Qed.")]
N_LINES = len(GOOD.splitlines())


def _line_of(text, needle):
    return text[:text.index(needle)].count("\n") + 1


# --- the text: forbidden commands outside comments and strings (fast, no coqc) ---

def test_code_only_follows_coqs_lexer():
    # comments nest, strings inside comments are lexed (a "*)" in one does not close the comment), "" escapes
    text = '(* a (* b *) "*)" c *) Qed. "x ""Admitted"" (*" Axiom'
    code = coq.code_only(text)
    assert len(code) == len(text)
    assert code.split() == ["Qed.", "Axiom"]


def test_words_in_comments_and_strings_are_not_commands():
    text = GOOD.replace("Qed.\nTheorem", 'Qed.\n(* Admitted. Axiom x : False. "*)" Admitted *)\n'
                        'Definition note := "Admitted. Axiom y : False. (*".\nTheorem', 1)
    assert coq.forbidden_commands(text) == []


def test_forbidden_commands_are_found_with_their_line():
    bad = GOOD.replace(PROOF, "Admitted.")
    found = coq.forbidden_commands(bad)
    assert len(found) == 1 and "Admitted" in found[0] and found[0].startswith(f"line {_line_of(bad, 'Admitted')}:")
    for cmd in ("Axiom ax : False.", "Local Axiom ax : False.", "Parameter p : R.", "Conjecture c : False.",
                "Section S. Hypothesis h : False. End S.", "Section S. Variable v : R. End S.",
                "Section S. Context (v : R). End S.", "Axioms p q : False.", "Unset Guard Checking.",
                "Local Unset Positivity Checking.", "Unset Universe Checking.",
                "#[bypass_check(guard)] Fixpoint f (n : nat) : False := f n.",
                'Declare ML Module "evil".', 'Add LoadPath "/tmp" as T.'):
        found = coq.forbidden_commands(GOOD + cmd + "\n")
        assert found and all(f.startswith(f"line {N_LINES + 1}:") for f in found), (cmd, found)
    assert coq.forbidden_commands(GOOD.replace("intros u a H", "admit. intros u a H", 1))
    # hidden from a checker that drops (* ... *) without reading strings: Coq compiles the Axiom
    hidden = GOOD + 'Definition s := "(*".\nAxiom hidden : False.\nDefinition t := "*)".\n'
    assert any("Axiom" in f for f in coq.forbidden_commands(hidden))
    assert coq.forbidden_commands(GOOD) == []


def test_check_refuses_a_missing_file_with_one_line(tmp_path, capsys):
    assert main(["check", str(tmp_path / "none.v")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "FILE" in err and "none.v" in err and "expected" in err
    (tmp_path / "x.txt").write_text(GOOD)
    assert main(["check", str(tmp_path / "x.txt")]) == 2
    assert "expected" in capsys.readouterr().err


def test_check_says_in_one_line_when_the_development_does_not_build(tmp_path, monkeypatch, capsys):
    # failed before: a RuntimeError traceback
    (tmp_path / "x.v").write_text(GOOD)
    broken = coq.BuildResult(tmp_path, runs=[coq.CoqRun("Calculus.v", False, 0.1, "Error:\n  Syntax error")],
                             planned=8)
    monkeypatch.setattr(coq, "build", lambda *a, **k: broken)
    assert main(["check", str(tmp_path / "x.v")]) == 1
    out, err = capsys.readouterr()
    assert "compiles" not in out and len(err.strip().splitlines()) == 1 and "Calculus.v" in err


def test_a_partial_build_is_refused_by_check_file_and_check_text_alike(tmp_path):
    # failed before: check_file raised StopIteration on a build cut short (every run ok, fewer than planned)
    (tmp_path / "x.v").write_text(GOOD)
    partial = coq.BuildResult(tmp_path, runs=[coq.CoqRun("Calculus.v", True, 0.1, "")], planned=8)
    for call in (lambda: coq.check_file(tmp_path / "x.v", dev=partial),
                 lambda: coq.check_text(GOOD, "x", dev=partial)):
        with pytest.raises(RuntimeError, match=r"does not build \(1 of 8 files built\)"):
            call()
    assert not (tmp_path / "x_.v").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["x.v"]


# --- compiled: what check vouches for (coqc) ---

def _check(dev, tmp_path, text, name="c"):
    path = tmp_path / f"{name}.v"
    path.write_text(text)
    return coq.check_file(path, dev=dev)


@pytest.mark.slow
@needs_coq
def test_the_reviewers_doctored_closure_is_refused(dev, tmp_path, monkeypatch, capsys):
    # failed before: "bad.v: compiles", rc 0 (a weakened bound and cert_in_Rplus Admitted)
    if (REVIEW / "bad.v").is_file():
        shutil.copyfile(REVIEW / "bad.v", tmp_path / "bad.v")
    else:
        text = GOOD.replace(PROOF, "Admitted.").replace(">= (1 / 2)", ">= (-1)")
        (tmp_path / "bad.v").write_text(text)
    monkeypatch.setattr(coq, "build", lambda *a, **k: dev)
    assert main(["check", str(tmp_path / "bad.v")]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("bad.v: REFUSED")
    assert re.search(r"cert_polarizes\w*: rests on .*cert_in_Rplus", out)
    assert "Admitted" in out
    # the witness on the same path: the honest file is vouched for
    run = _check(dev, tmp_path, GOOD, "good")
    assert run.ok and run.compiled and run.problems == [], run.output
    assert set(run.assumptions) >= {"cert_in_Rplus", "cert_polarizes", "cert_b"}
    assert coq.disallowed(run.assumptions) == {}
    assert "Classical_Prop.classic" in run.assumptions["cert_polarizes"]


@pytest.mark.slow
@needs_coq
def test_print_assumptions_catches_what_the_text_scan_would_not(dev, tmp_path):
    # the semantic layer alone (no text scan): an Admitted lemma, an axiom, disabled guard / positivity checking
    text = (GOOD.replace(PROOF, "Admitted.")
            + "Local Axiom ax : 0 = 1.\nTheorem uses_ax : 0 = 1. Proof. exact ax. Qed.\n"
            + "Unset Guard Checking.\nFixpoint loop (n : nat) : False := loop n.\nSet Guard Checking.\n"
            + "Theorem boom : False. Proof. exact (loop 0). Qed.\n"
            + "Unset Positivity Checking.\nInductive bad : Prop := C : (bad -> False) -> bad.\n"
            + "Set Positivity Checking.\nModule Inner. Axiom deep : False. End Inner.\n")
    path = tmp_path / "sem.v"
    path.write_text(text)
    run = coq.check_file(path, dev=dev, scan=False)
    assert run.compiled and not run.ok
    bad = coq.disallowed(run.assumptions)
    assert "Check_sem.cert_in_Rplus" in bad["cert_polarizes"] and bad["cert_in_Rplus"] == ["Check_sem.cert_in_Rplus"]
    assert bad["uses_ax"] == ["Check_sem.ax"]
    assert any("guarded" in a for a in bad["boom"]) and any("positive" in a for a in bad["bad"])
    assert bad["Inner.deep"] == ["Check_sem.Inner.deep"]
    assert "cert_b" not in bad
    # with the scan, the same file is refused for its text too
    full = coq.check_file(path, dev=dev)
    assert not full.ok and any("Admitted" in p for p in full.problems)
    assert any("Unset Guard Checking" in p for p in full.problems)


@pytest.mark.slow
@needs_coq
def test_a_file_that_does_not_compile_is_refused(dev, tmp_path):
    run = _check(dev, tmp_path, GOOD.replace(">= (1 / 2)", ">= 0"), "tie")
    assert not run.compiled and not run.ok and "Cannot find witness" in run.output


# ---- issue 37: certificate files may rest on the primitive-number axioms, named one by one; nothing else ----
def test_certificate_allow_list_is_explicit_and_separate():
    prim = coq.PRIMITIVE_NUMBER_AXIOMS
    assert prim and all("." in a and "*" not in a for a in prim) and len(set(prim)) == len(prim)
    assert not set(prim) & set(coq.ALLOWED_AXIOMS)                 # the development and 1-argument check: refused
    assert coq.EXISTENCE_AXIOM not in coq.CERTIFICATE_AXIOMS        # a replay theorem needs no existence axiom
    axs = {"cert_polarizes": [*coq.STDLIB_REAL_AXIOMS, "PrimFloat.add", "FloatAxioms.add_spec"]}
    assert coq.disallowed(axs, coq.CERTIFICATE_AXIOMS) == {}
    assert coq.disallowed(axs) == {"cert_polarizes": ["PrimFloat.add", "FloatAxioms.add_spec"]}
    # near misses: another primitive-looking name, the existence axiom, an Admitted lemma stay refused
    for extra in ("PrimFloat.add_exact", coq.EXISTENCE_AXIOM, "Check_F.cert_polarizes"):
        bad = {"cert_polarizes": [*coq.STDLIB_REAL_AXIOMS, extra]}
        assert coq.disallowed(bad, coq.CERTIFICATE_AXIOMS) == {"cert_polarizes": [extra]}



def test_a_replays_time_limit_grows_with_its_length():
    """FORMAL's full profile replays the n = 4 certificate of seed 0 in 136 steps (about 274 CPU s on 2 loaded cores):
    at the flat 300 s it timed out under load. A replay file's limit is 6 s a step, never below the flat limit."""
    assert coq.replay_timeout(10) == coq.COQC_TIMEOUT_S
    assert coq.replay_timeout(136) == 136 * coq.REPLAY_SECONDS_PER_STEP > coq.COQC_TIMEOUT_S


@pytest.mark.slow
@needs_coq
def test_check_file_keeps_to_the_time_limit_it_is_given(tmp_path, dev):
    """The limit reaches coqc: a file that compiles in well under a second at the flat limit times out at 1 ms."""
    f = tmp_path / "Quick.v"
    f.write_text("Lemma quick : 1 = 1. Proof. reflexivity. Qed.\n")
    assert coq.check_file(f, dev).ok
    run = coq.check_file(f, dev, timeout_s=0.001)
    assert not run.ok and "timed out after 0.001 s" in run.output
