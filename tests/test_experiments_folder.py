"""An experiment result folder is recognised by softpolar's marker only, and no file in it is rewritten
unless softpolar wrote it and it is unchanged since.

Found by review: a user's folder holding just ``summary.json`` and ``x.png`` (no marker) was taken for an
earlier result folder, and ``summary.json`` was then rewritten unconditionally.
"""
from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("torch")

TINY = ("induction", "--grid", "tiny", "--scheduler", "inline", "--no-progress", "--no-figures")


def _main(capsys, *args):
    from softpolar import main

    rc = main(["experiment", *args])
    got = capsys.readouterr()
    return rc, got.out, got.err


def _one_line(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("softpolar: error:") and "Traceback" not in err, err
    return lines[0]


def test_a_users_folder_with_our_file_names_is_refused(tmp_path, capsys):
    """Failed before the fix: rc 0 and the user's summary.json rewritten."""
    user = tmp_path / "userfolder"
    user.mkdir()
    (user / "summary.json").write_text('{"my": "own summary"}')
    (user / "x.png").write_text("my plot")
    rc, _, err = _main(capsys, *TINY, "--out", str(user))
    assert rc == 2 and "softpolar did not write" in _one_line(err)
    assert (user / "summary.json").read_text() == '{"my": "own summary"}'
    assert sorted(p.name for p in user.iterdir()) == ["summary.json", "x.png"]


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from softpolar import main

    out = tmp_path_factory.mktemp("exp") / "ind"
    assert main(["experiment", *TINY[:-1], "--out", str(out)]) == 0  # with its figures (PNG and PDF)
    return out


def _copy(src, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    return dst


def test_the_marker_records_every_file_written(tiny_folder):
    from numerics.io import content_digest
    from softpolar.experiments import MARKER, MARKER_VERSION

    marker = json.loads((tiny_folder / MARKER).read_text())
    written = {p.relative_to(tiny_folder).as_posix() for p in tiny_folder.rglob("*") if p.is_file()} - {MARKER}
    assert marker["softpolar_experiment"] == MARKER_VERSION and set(marker["files"]) == written
    assert len([n for n in written if n.startswith("runs/")]) == 4 and {"sink_heads.png", "sink_heads.pdf"} <= written
    for name, digest in marker["files"].items():
        assert content_digest((tiny_folder / name).read_bytes()) == digest


@pytest.mark.parametrize("name", ["summary.json", "table.md"])
def test_an_edited_output_is_refused_and_left_as_it_is(tiny_folder, tmp_path, capsys, name):
    folder = _copy(tiny_folder, tmp_path)
    (folder / name).write_text("my own notes\n")
    rc, _, err = _main(capsys, *TINY, "--out", str(folder))
    line = _one_line(err)
    assert rc == 2 and repr(name) in line and "changed since softpolar wrote it" in line
    assert (folder / name).read_text() == "my own notes\n"


def test_an_unchanged_folder_is_resumed_and_its_runs_reused(tiny_folder, tmp_path, capsys):
    """The control: the untouched copy reruns (rc 0), no run is recomputed, the summary is rewritten."""
    folder = _copy(tiny_folder, tmp_path)
    runs = {p.name: p.read_bytes() for p in (folder / "runs").iterdir()}
    rc, _, err = _main(capsys, *TINY, "--out", str(folder))
    assert rc == 0, err
    assert {p.name: p.read_bytes() for p in (folder / "runs").iterdir()} == runs
    assert json.loads((folder / "summary.json").read_text())["out"] == str(folder)


def test_a_run_file_that_would_be_rerun_is_rewritten_only_if_ours(tiny_folder, tmp_path, capsys):
    from softpolar.experiments import MARKER

    folder = _copy(tiny_folder, tmp_path)
    run = sorted((folder / "runs").iterdir())[0]
    data = json.loads(run.read_text())
    data["config"]["seed"] = 12345  # no longer this config's result: the grid would rerun and rewrite it
    run.write_text(json.dumps(data))
    rc, _, err = _main(capsys, *TINY, "--out", str(folder))
    assert rc == 2 and repr(f"runs/{run.name}") in _one_line(err)
    assert json.loads(run.read_text())["config"]["seed"] == 12345
    # a marker of the first format (no hashes) marks the folder as ours but vouches for no file in it
    folder2 = _copy(tiny_folder, tmp_path / "v1")
    (folder2 / MARKER).write_text(json.dumps({"softpolar_experiment": 1, "name": "induction", "grid": "tiny"}))
    rc, _, err = _main(capsys, *TINY, "--out", str(folder2))
    assert rc == 2 and "'summary.json', which is not recorded" in _one_line(err)
    for p in folder2.iterdir():  # the user moves the unrecorded outputs away
        if p.is_file() and p.name != MARKER:
            p.unlink()
    rc, _, err = _main(capsys, *TINY, "--out", str(folder2))  # its finished runs are still reused
    assert rc == 0, err
