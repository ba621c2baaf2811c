"""An atlas folder is rerun only while softpolar's files in it are as softpolar wrote them.

Found by review: a finished atlas folder copied elsewhere, with ``atlas.png`` replaced by the user's own
text and a key added to ``atlas.json``, was rerun with exit 0 and both files silently replaced (the
folder check looked at file names only).
"""
from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("flint")

from softpolar import main
from theorems import InvalidArgument

ARGS = ["--start-width", "1/2", "--min-width", "1/4", "--map-size", "32", "--scheduler", "inline", "--no-progress"]


def _cli(capsys, *args):
    rc = main(list(args))
    got = capsys.readouterr()
    return rc, got.out, got.err


@pytest.fixture(scope="module")
def atlas_folder(tmp_path_factory):
    from softpolar.atlas import run_atlas

    out = tmp_path_factory.mktemp("atlas-folders") / "c3"
    run_atlas("conflict3", out, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
              progress=False, draw=True)
    return out


def _copy(atlas_folder, tmp_path):
    dst = tmp_path / "atl2"
    shutil.copytree(atlas_folder, dst)
    return dst


def test_the_marker_records_the_content_hash_of_each_output(atlas_folder):
    from numerics.io import content_digest
    from softpolar.atlas import MARKER
    from softpolar.atlas.engine import OUTPUTS

    marker = json.loads((atlas_folder / MARKER).read_text())
    assert set(marker["files"]) == set(OUTPUTS) and "replacing" not in marker
    for name in OUTPUTS:
        assert marker["files"][name] == content_digest((atlas_folder / name).read_bytes())


@pytest.mark.parametrize("name, edit", [
    ("atlas.png", lambda p: p.write_text("my own picture\n")),
    ("atlas.json", lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "my_note": "keep"}, indent=1))),
    ("float64.npy", lambda p: p.write_bytes(p.read_bytes() + b"\0")),
])
def test_an_edited_output_is_refused_and_left_as_it_is(atlas_folder, tmp_path, capsys, name, edit):
    """Failed before the fix: rc 0 and the user's file replaced."""
    folder = _copy(atlas_folder, tmp_path)
    edit(folder / name)
    mine = (folder / name).read_bytes()
    rc, _, err = _cli(capsys, "atlas", "conflict3", "--out", str(folder), *ARGS)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and repr(name) in lines[0], err
    assert "changed since softpolar wrote it" in lines[0]
    assert (folder / name).read_bytes() == mine


def test_an_unchanged_folder_is_rerun_and_its_outputs_replaced(atlas_folder, tmp_path, capsys):
    """The control: the same copy, untouched, is resumed (rc 0) and the marker follows the new files."""
    from numerics.io import content_digest
    from softpolar.atlas import MARKER

    folder = _copy(atlas_folder, tmp_path)
    rc, _, err = _cli(capsys, "atlas", "conflict3", "--out", str(folder), *ARGS)
    assert rc == 0, err
    marker = json.loads((folder / MARKER).read_text())
    assert marker["files"]["atlas.json"] == content_digest((folder / "atlas.json").read_bytes())
    rc, _, err = _cli(capsys, "atlas", "conflict3", "--out", str(folder), *ARGS)  # and again
    assert rc == 0, err


def test_an_output_the_marker_does_not_record_is_refused(atlas_folder, tmp_path):
    """A marker without content hashes (or one that lists none for a file) vouches for no output."""
    from softpolar.atlas import run_atlas
    from softpolar.atlas import MARKER

    folder = _copy(atlas_folder, tmp_path)
    marker = json.loads((folder / MARKER).read_text())
    del marker["files"]["atlas.png"]
    (folder / MARKER).write_text(json.dumps(marker))
    with pytest.raises(InvalidArgument, match="'atlas.png', which was not written by softpolar"):
        run_atlas("conflict3", folder, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
                  progress=False)
    # a marker without hashes, over a folder that holds only the journal (an interrupted run): resumed
    folder2 = tmp_path / "interrupted"
    folder2.mkdir()
    shutil.copy(atlas_folder / "journal.jsonl", folder2)
    (folder2 / MARKER).write_text(json.dumps({k: marker[k] for k in ("format", "spec", "engine")}))
    run_atlas("conflict3", folder2, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
              progress=False, draw=False)
    assert (folder2 / "atlas.json").is_file()


def test_a_file_edited_while_the_run_computes_is_not_replaced(atlas_folder, tmp_path, monkeypatch):
    from softpolar.atlas import engine as E

    folder = _copy(atlas_folder, tmp_path)
    real = E.compare_float

    def edit_then_compare(*a, **kw):  # runs after the folder check, before the outputs are written
        (folder / "atlas.json").write_text("{}\n")
        return real(*a, **kw)

    monkeypatch.setattr(E, "compare_float", edit_then_compare)
    with pytest.raises(InvalidArgument, match="'atlas.json', which was changed since"):
        E.run_atlas("conflict3", folder, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
                    progress=False, draw=False)
    assert (folder / "atlas.json").read_text() == "{}\n"


def test_a_run_killed_between_the_renames_leaves_a_folder_still_recognised(atlas_folder, tmp_path):
    """The marker accepts the old and the new hash while the outputs are renamed into place."""
    from softpolar.atlas import engine as E

    folder = _copy(atlas_folder, tmp_path)
    marker = json.loads((folder / E.MARKER).read_text())
    old = marker["files"]["atlas.json"]
    marker["files"]["atlas.json"] = "sha256:" + "0" * 64  # the new one, never renamed into place
    marker["replacing"] = {"atlas.json": old}
    (folder / E.MARKER).write_text(json.dumps(marker))
    E.run_atlas("conflict3", folder, start_width="1/2", min_width="1/4", map_size=32, scheduler="inline",
                progress=False, draw=False)
    assert "replacing" not in json.loads((folder / E.MARKER).read_text())
