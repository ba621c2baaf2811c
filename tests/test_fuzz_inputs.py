r"""Fuzz every input reader with inputs that are small to write and large to expand (round two).

* string numbers with huge exponents, huge rationals or non-ASCII digits in any number of an atlas spec
  and of an initial condition: refused with :class:`InvalidArgument` (or read, when harmless), fast;
* duplicate keys anywhere at the top of an init file, an atlas spec or a certificate: refused;
* a FIFO given to any JSON reader: refused at once (a plain ``open()`` would block forever);
* edited journal records: never counted (their digest fails), so a resumed atlas recomputes them;
* concurrent writers on one output folder: exactly one holds the folder lock at a time.

Example counts follow the Hypothesis profile (``tests/fuzz_strategies.py``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from theorems import InvalidArgument

from .fuzz_strategies import GOOD, duplicate_key_json, edited_record, examples, huge_number_strings

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
_SPEC = {"name": "s", "n": 3, "b": "1", "u0": ["x", "0", "-1"], "a0": ["0", "y", "-1"], "x": ["-1", "1"],
         "y": ["-1", "1"]}
#: a hostile number must be refused (or read) well within this; the hangs found took hours
FAST = 5.0


def _quick(fn, *args):
    t0 = time.perf_counter()
    try:
        fn(*args)
        ok = True
    except InvalidArgument:
        ok = False
    assert time.perf_counter() - t0 < FAST, ("slow", args)
    return ok


@settings(max_examples=examples(60), **_SETTINGS)
@given(text=huge_number_strings(), where=st.sampled_from(["b", "x0", "x1", "y1", "u0", "a0"]))
def test_atlas_spec_numbers_never_expand(text, where):
    from softpolar.atlas import load_slice
    from softpolar.atlas.engine import MAX_COORD

    spec = json.loads(json.dumps(_SPEC))
    if where == "b":
        spec["b"] = text
    elif where in ("u0", "a0"):
        spec[where][1] = f"{text} + {spec[where][1]}"
    else:
        spec[where[0]][int(where[1])] = text
    if _quick(load_slice, spec):
        assert text.isascii()  # a non-ASCII digit is never read as ASCII
        sl = load_slice(spec)
        assert abs(sl.b) <= MAX_COORD and all(abs(v) <= MAX_COORD for v in sl.x + sl.y)


@settings(max_examples=examples(40), **_SETTINGS)
@given(text=huge_number_strings(), field=st.sampled_from(["V", "a", "target"]))
def test_init_string_numbers_never_expand(text, field):
    from numerics import Problem
    from numerics import parse_init

    floats = json.loads(json.dumps(GOOD))
    strings = json.loads(json.dumps(GOOD), parse_float=str, parse_int=str)  # as certify reads a file
    for doc in (floats, strings):
        if field == "V":
            doc["V"][0][0] = text
        else:
            doc[field][0] = text
    for reader, doc in ((Problem.from_json, floats), (Problem.from_json, strings), (parse_init, strings)):
        if _quick(reader, doc):
            assert text.isascii()  # a non-ASCII digit is never read as ASCII


@settings(max_examples=examples(40), **_SETTINGS)
@given(data=st.data(), kind=st.sampled_from(["init", "spec", "certify-init"]))
def test_duplicate_keys_are_refused_everywhere(tmp_path_factory, data, kind):
    from numerics import Problem
    from numerics import load_init
    from softpolar.atlas import load_slice

    doc = _SPEC if kind == "spec" else GOOD
    text = data.draw(duplicate_key_json(doc))
    path = tmp_path_factory.mktemp("dup") / "d.json"
    path.write_text(text)
    reader = {"init": Problem.from_json, "spec": load_slice, "certify-init": load_init}[kind]
    with pytest.raises(InvalidArgument, match="repeats the key"):
        reader(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@settings(max_examples=examples(8), **_SETTINGS)
@given(kind=st.sampled_from(["init", "certify-init", "certificate", "spec", "atlas-check", "read_json"]))
def test_a_fifo_is_refused_by_every_reader(tmp_path_factory, kind):
    from numerics import Problem, load_certificate
    from numerics.io import read_json
    from numerics import load_init
    from softpolar.atlas import load_slice

    fifo = tmp_path_factory.mktemp("fifo") / "f.json"
    os.mkfifo(fifo)
    reader = {"init": Problem.from_json, "certify-init": load_init, "certificate": load_certificate,
              "spec": load_slice, "atlas-check": lambda p: read_json(p, "--check"),
              "read_json": lambda p: read_json(p, "x")}[kind]
    t0 = time.perf_counter()
    with pytest.raises(InvalidArgument, match="FIFO"):
        reader(fifo)
    assert time.perf_counter() - t0 < FAST


_ATLAS = {}


def _atlas(tmp_root: Path):
    """One small inline atlas per test session (Hypothesis reuses it; the journal is copied per example)."""
    if "out" not in _ATLAS:
        from softpolar.atlas import run_atlas

        out = tmp_root / "c3"
        run_atlas("conflict3", out, start_width="1/2", min_width="1/4", map_size=16, scheduler="inline",
                  progress=False, draw=False)
        _ATLAS["out"] = out
    return _ATLAS["out"]


@settings(max_examples=examples(40), **_SETTINGS)
@given(data=st.data())
def test_edited_journal_records_never_count(tmp_path_factory, data):
    from softpolar.atlas.engine import read_journal

    out = _atlas(tmp_path_factory.getbasetemp())
    marker = json.loads((out / "atlas-run.json").read_text())
    lines = (out / "journal.jsonl").read_text().splitlines()
    k = data.draw(st.integers(0, len(lines) - 1))
    rec, field, changed = data.draw(edited_record(json.loads(lines[k])))
    edited = tmp_path_factory.mktemp("journal") / "journal.jsonl"
    edited.write_text("\n".join(lines[:k] + [json.dumps(rec)] + lines[k + 1:]) + "\n")
    done, dropped = read_journal(edited, marker["spec"], marker["engine"])
    assert dropped == (1 if changed else 0), (field, rec)
    assert len(done) == len(lines) - dropped
    if changed and "key" in rec and isinstance(rec["key"], list):
        assert done.get(tuple(rec["key"])) != rec


@settings(max_examples=3, **_SETTINGS)  # 3 in every profile: each example starts 2-3 Python processes (~4 s each)
@given(writers=st.integers(2, 3))
def test_concurrent_writers_one_lock_holder(tmp_path_factory, writers):
    """Writers started together on one folder: exactly one gets the lock, the others are refused."""
    folder = tmp_path_factory.mktemp("lock") / "out"
    release = folder.parent / "release"
    code = ("import sys, time, pathlib\nfrom numerics.io import folder_lock\nfrom theorems import InvalidArgument\n"
            f"try:\n with folder_lock({str(folder)!r}):\n  print('got', flush=True)\n"
            f"  while not pathlib.Path({str(release)!r}).exists(): time.sleep(0.05)\n"
            "except InvalidArgument as e:\n print('refused', flush=True)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(writers)]
    try:
        first = [p.stdout.readline().strip() for p in procs]
        assert sorted(first) == ["got"] + ["refused"] * (writers - 1), first
    finally:
        release.write_text("")
        for p in procs:
            p.wait(timeout=60)
            p.stdout.close()
    assert not (folder.parent / ".out.lock").exists()
