"""numerics.io: the one atomic writer (text, JSON, matplotlib figures) and its users."""
from __future__ import annotations

import json
import os
import stat

import pytest

from numerics import io as _io
from numerics.io import save_figure_atomic, write_json_atomic, write_text_atomic

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _figure():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5))
    fig.subplots().plot([0, 1, 2], [1, 0, 1])
    return fig


def test_text_round_trip_creates_folder_and_adds_nothing(tmp_path):
    target = tmp_path / "a" / "b" / "notes.md"
    text = "line 1\nünïcode ∑ φ(a)\n\nno newline at the end"
    assert write_text_atomic(target, text) == target
    assert target.read_bytes() == text.encode("utf-8")
    assert sorted(p.name for p in target.parent.iterdir()) == ["notes.md"]


def test_json_round_trip_and_formatting(tmp_path):
    data = {"b": [1, 2.5, None], "a": "x", "nan": float("nan")}
    target = write_json_atomic(tmp_path / "one.json", data)
    assert target.read_text() == json.dumps(data) + "\n", "defaults are json.dump's, plus a newline"
    back = json.loads(target.read_text())
    assert back["b"] == [1, 2.5, None] and back["a"] == "x" and back["nan"] != back["nan"]

    write_json_atomic(tmp_path / "grid.json", data, end="", fsync=True, indent=1, sort_keys=True)
    assert (tmp_path / "grid.json").read_text() == json.dumps(data, indent=1, sort_keys=True)

    with pytest.raises(ValueError):
        write_json_atomic(tmp_path / "strict.json", data, allow_nan=False)
    assert not (tmp_path / "strict.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.json", "one.json"]


def test_figure_is_a_png(tmp_path):
    target = save_figure_atomic(_figure(), tmp_path / "figs" / "plot.png", dpi=50)
    assert target.read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in target.parent.iterdir()) == ["plot.png"]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_final_file_has_the_usual_permissions(tmp_path, mask):
    old = os.umask(mask)
    try:
        files = [write_text_atomic(tmp_path / "t.txt", "x"),
                 write_json_atomic(tmp_path / "j.json", [1]),
                 save_figure_atomic(_figure(), tmp_path / "f.png", dpi=30)]
    finally:
        os.umask(old)
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~mask, f"{f.name}: not mkstemp's 0600"


def test_replacing_an_existing_file_gets_fresh_permissions(tmp_path):
    target = tmp_path / "x.txt"
    target.write_text("old")
    target.chmod(0o600)
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()


def _interrupting_dump(obj, fh, **kw):
    fh.write('{"partial": ')  # half a document reaches the temporary file ...
    fh.flush()
    raise KeyboardInterrupt  # ... then the user presses Ctrl-C


@pytest.mark.parametrize("existing", [None, '{"kept": true}\n'])
def test_interrupted_json_write_leaves_nothing_behind(tmp_path, monkeypatch, existing):
    target = tmp_path / "out.json"
    if existing is not None:
        target.write_text(existing)
    monkeypatch.setattr(json, "dump", _interrupting_dump)
    with pytest.raises(KeyboardInterrupt):
        write_json_atomic(target, {"new": 1}, indent=1)
    monkeypatch.undo()
    if existing is None:
        assert not target.exists(), "no partial target"
    else:
        assert target.read_text() == existing, "the previous file is kept intact"
    assert [p.name for p in tmp_path.iterdir()] == ([] if existing is None else ["out.json"]), \
        "no temporary file is left"


@pytest.mark.parametrize("existing", [None, b"old png bytes"])
def test_interrupted_figure_save_leaves_nothing_behind(tmp_path, existing):
    target = tmp_path / "plot.png"
    if existing is not None:
        target.write_bytes(existing)
    fig = _figure()
    real = fig.savefig

    def savefig(fh, **kw):
        real(fh, **kw)  # a complete PNG is in the temporary file when the interrupt comes
        raise KeyboardInterrupt

    fig.savefig = savefig
    with pytest.raises(KeyboardInterrupt):
        save_figure_atomic(fig, target)
    if existing is None:
        assert not target.exists()
    else:
        assert target.read_bytes() == existing
    assert len(list(tmp_path.iterdir())) == (0 if existing is None else 1), "no temporary file is left"


def test_failed_replace_removes_the_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "t.txt"
    target.write_text("old")

    def refuse(src, dst):
        raise OSError("replace refused")

    monkeypatch.setattr(_io.os, "replace", refuse)
    with pytest.raises(OSError, match="replace refused"):
        write_text_atomic(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_temporary_file_is_in_the_target_folder(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append((os.fspath(src), os.fspath(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(_io.os, "replace", spy)
    write_text_atomic(tmp_path / "sub" / "t.txt", "x")
    (src, dst), = seen
    assert os.path.dirname(src) == os.path.dirname(dst) == str(tmp_path / "sub")
    name = os.path.basename(src)
    assert name.startswith(".t.txt.") and name.endswith(".tmp"), name


def test_callers_keep_their_names_and_formats(tmp_path):
    """The old entry points still exist and write the bytes they wrote before."""
    import numerics
    from softpolar.experiments import grid
    from proofs_check.report import write_atomic

    data = {"z": 1, "a": [0.5]}
    numerics.write_json_atomic(tmp_path / "cert.json", data)
    assert (tmp_path / "cert.json").read_text() == json.dumps(data, indent=1) + "\n"
    grid.write_json_atomic(tmp_path / "runs" / "r.json", data)
    assert (tmp_path / "runs" / "r.json").read_text() == json.dumps(data, indent=1, sort_keys=True)
    write_atomic(str(tmp_path / "d.md"), "# derive\n")
    assert (tmp_path / "d.md").read_text() == "# derive\n"

    from theorems import InvalidArgument

    with pytest.raises(InvalidArgument, match="folder does not exist"):
        numerics.write_json_atomic(tmp_path / "missing" / "cert.json", data)
    assert not (tmp_path / "missing").exists()


# ---- read_json: one reader for every JSON input (init, certificate, atlas spec and certificate) ----
@pytest.mark.parametrize("content,needle", [
    (None, "cannot be read"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"{", "not valid JSON"),
    (b"[" * 100_000, "nested too deeply"),
    (b'{"x": ' + b"9" * 5000 + b"}", "4300 digits"),
])
def test_read_json_turns_every_bad_file_into_one_invalid_argument(tmp_path, content, needle):
    from numerics.io import read_json
    from theorems import InvalidArgument

    f = tmp_path / "in.json"
    if content is not None:
        f.write_bytes(content)
    with pytest.raises(InvalidArgument, match=needle) as info:
        read_json(f, "spec")
    assert str(info.value).startswith(f"spec={str(f)!r}")
    assert read_json(_good(tmp_path), "spec") == {"ok": 1}  # control: a good file reads


def _good(tmp_path):
    g = tmp_path / "good.json"
    g.write_text('{"ok": 1}')
    return g


@pytest.mark.parametrize("argv", [["atlas", "SPEC"], ["atlas", "--check", "SPEC"], ["certify", "--check", "SPEC"]])
def test_atlas_and_certificate_readers_share_it(tmp_path, capsys, argv):
    from softpolar import main

    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000)
    assert main([str(f) if a == "SPEC" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nested too deeply" in err
