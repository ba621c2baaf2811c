"""``python -m theorems.coq check FILE.v`` never writes outside a private temporary folder (issue 38).

Failed before: a file holding ``Extraction "PATH" nat.`` or ``Redirect "PATH" ...`` overwrote ``PATH`` and was
vouched for with exit 0. Now every file-writing vernacular is refused before compiling (first layer), and the
compile runs in a private folder, read-only elsewhere where the system allows (second layer, tested with the first
switched off)."""
import pytest

from theorems import coq
from theorems.coq import sandbox
from theorems.coq.__main__ import main

HEAD = "From Coq Require Import Reals.\nDefinition d := 1%nat.\n"
#: what a file that extracts needs first (refused by itself too: the keyword)
EXTR = "Require Extraction.\n"

#: every form the 8.16 command index lists that writes, changes folder or loads code ({f}: a target path)
WRITERS = ('Extraction "{f}" nat.', 'Recursive Extraction nat.', 'Separate Extraction nat.',
           'Extraction Library Datatypes.', 'Recursive Extraction Library Datatypes.',
           'Extraction TestCompile nat.', 'Extraction Language Haskell.', 'Redirect "{f}" Check nat.',
           'Time Redirect "{f}" Check nat.', 'Cd "/".', 'Print Universes "{f}".', 'Print Sorted Universes "{f}".',
           'Set NativeCompute Profile Filename "{f}".', 'Set NativeCompute Profiling.', 'Load "{f}".',
           'Load Verbose "{f}".', 'Declare ML Module "evil".', 'Add LoadPath "/tmp" as T.',
           'Add Rec ML Path "/tmp".', 'Local Redirect "{f}" Print nat.')
#: the same commands hidden by comment and string tricks a naive scanner falls for; Coq runs each of them
TRICKS = ('(* (* *) *) Extraction "{f}" nat.', '(* "*)" *) Redirect "{f}" Check nat.',
          'Definition s := "(*".\nExtraction "{f}" nat.\nDefinition t := "*)".',
          'Definition s := "a ""(*"" b".\nRedirect "{f}" Check nat.', 'Recursive (* x *) Extraction nat.',
          'Print\n  Universes "{f}".', '(*) *) Cd "/".')


@pytest.mark.parametrize("cmd", WRITERS + TRICKS)
def test_every_writing_command_is_refused_before_compiling(cmd, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    src = tmp_path / "f.v"
    src.write_text(HEAD + cmd.format(f=victim) + "\n")
    run = coq.check_file(src, dev=coq.BuildResult(tmp_path))   # never built: refused before anything runs
    assert run.blocked and not run.ok and not run.compiled, cmd
    assert any(p.startswith("line 3:") or p.startswith("line 4:") for p in run.problems), run.problems
    assert victim.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.v", "victim.txt"]


def test_words_in_comments_and_strings_are_not_writing_commands(tmp_path):
    # the negative control: the same words where Coq never runs them
    text = HEAD + '(* Extraction "x" nat. Redirect "y" Check nat. Cd "/". *)\nDefinition s := "Load ""x"" Cd".\n'
    assert sandbox.writing_commands(coq.code_only(text)) == []
    assert sandbox.writing_commands(coq.code_only(text + "Cd \"/\".\n"))


def test_the_cli_says_the_file_was_not_compiled(tmp_path, capsys):
    src = tmp_path / "f.v"
    src.write_text(HEAD + 'Extraction "victim.ml" nat.\n')
    assert main(["check", str(src)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("f.v: REFUSED: not compiled") and "Extraction" in out


@pytest.mark.slow
def test_a_missed_command_cannot_write_outside_the_private_folder(dev, tmp_path, monkeypatch):
    # the first layer switched off: coqc really runs the commands
    monkeypatch.setattr(sandbox, "writing_commands", lambda code: [])
    before = sorted(p.name for p in dev.folder.iterdir())
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    rel = HEAD + EXTR + 'Redirect "victim" Check nat.\nExtraction "victim.ml" nat.\nPrint Universes "u.dot".\n'
    src = tmp_path / "rel.v"
    src.write_text(rel)
    run = coq.check_file(src, dev=dev)
    assert run.compiled, run.output                    # it ran, and wrote only into the private folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel.v", "victim.txt"]
    assert sorted(p.name for p in dev.folder.iterdir()) == before
    if not sandbox.namespace_works():
        pytest.skip("no mount namespace here: an absolute path relies on the command scan")
    for cmd in (f'Extraction "{victim}" nat.', f'Redirect "{tmp_path / "victim"}" Check nat.',
                f'Print Universes "{victim}".', 'Cd "/tmp".\nRedirect "softpolar-cd-probe" Check nat.'):
        src = tmp_path / "abs.v"
        src.write_text(HEAD + EXTR + cmd + "\n")
        run = coq.check_file(src, dev=dev)
        src.unlink()
        assert not run.compiled and "Read-only file system" in run.output, (cmd, run.output)
        assert victim.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel.v", "victim.txt"]
    assert sorted(p.name for p in dev.folder.iterdir()) == before


@pytest.mark.slow
def test_an_honest_file_still_compiles_in_the_private_folder(dev, tmp_path):
    # the witness: the confinement does not break what check vouches for
    src = tmp_path / "ok.v"
    src.write_text(HEAD + "Theorem t : (1 + 1 = 2)%nat. Proof. reflexivity. Qed.\n")
    run = coq.check_file(src, dev=dev)
    assert run.ok and set(run.assumptions) == {"d", "t"}, run.output
    assert "Read-only" not in run.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.v"]
