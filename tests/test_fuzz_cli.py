r"""Fuzz the command line with hostile JSON files and hostile argument vectors.

For every subcommand (``simulate``, ``certify --init`` / ``--check``, ``derive``, ``verify``,
``list``, ``experiment``) Hypothesis draws argument vectors from pools of hostile values
(empty, negative, NaN, infinities, huge integers beyond Python's 4300-digit string limit, long
strings, control characters, paths to folders, devices, read-only places, the input itself) and
JSON documents (random JSON, and valid documents with one field replaced by a hostile value),
and checks the documented contract on each:

* the exit code is one of the documented ones: 0 success, 1 failed check / integration
  failure, 2 bad input;
* a failure prints exactly one line, ``softpolar: error: ...`` (exit 2) or
  ``softpolar: integration failed: ...`` / a ``check failed`` line (exit 1), never a traceback;
* no file outside the run's output is created, changed or removed (the folder is snapshotted
  before and after; the output itself may appear only on success).

Every valid run is kept short by construction (``--max-steps``, ``--time-budget``, small
``--t-end`` pools, stubbed claims and grids), so the CI part stays within seconds. The example
counts follow the Hypothesis profile of ``tests/conftest.py`` (``ci``/``dev``: the counts
below, a few hundred in all; ``HYPOTHESIS_PROFILE=thorough``: 500 per test).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from softpolar import main

from .fuzz_strategies import GOOD, examples, hostile_json, hostile_paths, hostile_values, near_valid_init

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                        HealthCheck.too_slow])


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else "dir")
            for p in sorted(folder.rglob("*"))}


def check_contract(rc: int, out: str, err: str, *, codes=(0, 1, 2)) -> None:
    assert rc in codes, (rc, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    if rc == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("softpolar: error: "), err
    if rc == 1:
        fails = [ln for ln in err.splitlines() if ln.startswith("softpolar: integration failed: ")]
        assert len(fails) <= 1, err


def run_cli(capsys, argv):
    rc = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


class Sandbox:
    """A fresh folder per example (function-scoped fixtures are shared by all examples)."""

    def __init__(self, root: Path):
        self.root = root
        self.k = 0

    def new(self) -> Path:
        self.k += 1
        d = self.root / f"ex{self.k}"
        d.mkdir()
        return d


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return Sandbox(tmp_path)


def _outputs(args, folder: Path, exclude=()) -> set[str]:
    """The output names of ``args`` inside ``folder``: the first path component below it."""
    out = set()
    for a in args:
        s = str(a)
        if s.startswith(str(folder) + "/") and a not in exclude:
            rel = s[len(str(folder)) + 1:].strip("/")
            if rel:
                out.add(rel.split("/")[0])
    return out


def _untouched_except(before: dict, after: dict, outputs: set[str], rc: int) -> None:
    for name, content in before.items():
        assert after.get(name) == content, f"{name} was changed or removed"
    new = set(after) - set(before)
    allowed = {o for o in outputs} | {n for n in new if any(n.startswith(o + "/") for o in outputs)}
    assert new <= allowed, f"unexpected files {sorted(new - allowed)}"
    if rc == 2:  # bad input is refused before anything is written
        assert not (new & outputs), f"output {sorted(new & outputs)} written on exit {rc}"


# ---- simulate ------------------------------------------------------------------------------------
SIM_FLAGS = ["--t-end", "--times", "--backend", "--dps", "--clock", "--rtol", "--atol", "--max-steps",
             "--gd-lr", "--out", "--plot", "--loss", "--link", "--device"]


@settings(max_examples=examples(60), **_SETTINGS)
@given(doc=st.one_of(near_valid_init(), hostile_json()), data=st.data())
def test_simulate_hostile_init(capsys, sandbox, doc, data):
    d = sandbox.new()
    init = d / "init.json"
    init.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    before = snapshot(d)
    args = ["simulate", "--init", init, "--t-end", data.draw(st.sampled_from(["1", "0.5", "1e3"])),
            "--backend", data.draw(st.sampled_from(["numpy", "mpmath", "torch"])), "--max-steps", "300",
            "--quiet", "--out", d / "out.json"]
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)
    _untouched_except(before, snapshot(d), {"out.json"}, rc)


@settings(max_examples=examples(80), **_SETTINGS)
@given(data=st.data())
def test_simulate_hostile_arguments(capsys, sandbox, data):
    d = sandbox.new()
    init = d / "init.json"
    init.write_text(json.dumps(GOOD))
    before = snapshot(d)
    args = ["simulate", "--init", init, "--quiet"]
    if data.draw(st.booleans()):
        args += ["--t-end", data.draw(st.one_of(hostile_values(), st.sampled_from(["1", "0.1"])))]
    else:
        args += ["--t-end", "1"]
    for flag in data.draw(st.lists(st.sampled_from(SIM_FLAGS[1:]), max_size=4, unique=True)):
        value = data.draw(hostile_paths(d, init) if flag in ("--out", "--plot") else hostile_values())
        args += [flag, value]
    if "--max-steps" not in args:
        args += ["--max-steps", "300"]  # every valid run stays short
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)
    _untouched_except(before, snapshot(d), _outputs(args, d, exclude=(init,)), rc)


@settings(max_examples=examples(30), **_SETTINGS)
@given(data=st.data())
def test_simulate_hostile_seeded_arguments(capsys, sandbox, data):
    args = ["simulate", "--seed", data.draw(st.one_of(hostile_values(), st.just("1"))),
            "--d", data.draw(st.one_of(hostile_values(), st.just("2"))),
            "--n", data.draw(st.one_of(hostile_values(), st.just("3"))),
            "--loss", data.draw(st.one_of(hostile_values(), st.sampled_from(["logistic", "square", "kl"]))),
            "--t-end", "0.5", "--backend", "numpy", "--max-steps", "200", "--quiet"]
    for flag in data.draw(st.lists(st.sampled_from(["--v-scale", "--a0", "--a-scale", "--kappa", "--link"]),
                                   max_size=3, unique=True)):
        args += [flag, data.draw(hostile_values())]
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)


# ---- certify -------------------------------------------------------------------------------------
@settings(max_examples=examples(40), **_SETTINGS)
@given(doc=st.one_of(near_valid_init(logistic=True), hostile_json()), data=st.data())
def test_certify_hostile_init_and_check(capsys, sandbox, doc, data):
    d = sandbox.new()
    f = d / "in.json"
    f.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    before = snapshot(d)
    mode = data.draw(st.sampled_from(["--init", "--check"]))
    args = ["certify", mode, f]
    if mode == "--init":
        args += ["--time-budget", "0.5", "--tau-max", data.draw(st.sampled_from(["0.5", "2"])),
                 "--out", d / "cert.json"]
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)
    _untouched_except(before, snapshot(d), {"cert.json"}, rc)


@settings(max_examples=examples(30), **_SETTINGS)
@given(data=st.data())
def test_certify_hostile_arguments(capsys, sandbox, data):
    d = sandbox.new()
    init = d / "init.json"
    init.write_text(json.dumps(GOOD))
    before = snapshot(d)
    args = ["certify", "--init", init, "--time-budget", "0.5"]
    for flag in data.draw(st.lists(st.sampled_from(["--tau-max", "--prec", "--order", "--time-budget",
                                                    "--out"]), max_size=3, unique=True)):
        args += [flag, data.draw(hostile_paths(d, init) if flag == "--out" else hostile_values())]
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)
    _untouched_except(before, snapshot(d), _outputs(args, d, exclude=(init,)), rc)


# ---- derive, verify, list ------------------------------------------------------------------------
@settings(max_examples=examples(20), **_SETTINGS)
@given(data=st.data())
def test_derive_hostile_arguments(capsys, sandbox, data):
    d = sandbox.new()
    before = snapshot(d)
    args = ["derive", "--no-proofs"]
    for flag in data.draw(st.lists(st.sampled_from(["--loss", "--link", "--n", "--d", "--format", "--out"]),
                                   min_size=1, max_size=3, unique=True)):
        args += [flag, data.draw(hostile_paths(d, None) if flag == "--out" else hostile_values())]
    if "--n" not in args:
        args += ["--n", "2"]
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)
    _untouched_except(before, snapshot(d), _outputs(args, d), rc)


@pytest.fixture
def fast_claims(monkeypatch):
    """``verify`` without the claims' cost: every claim returns a canned result at once."""
    from proofs_check.cli import _cmd_verify

    from .test_report import _result

    monkeypatch.setattr(_cmd_verify, "run_claim", lambda claim, ctx: _result())


@settings(max_examples=examples(30), **_SETTINGS)
@given(data=st.data())
def test_verify_hostile_arguments(capsys, sandbox, fast_claims, data):
    d = sandbox.new()
    (d / "thesis.tex").write_text("keep")
    before = snapshot(d)
    args = ["verify", "--claims", data.draw(st.one_of(st.just("C04"), hostile_values()))]
    for flag in data.draw(st.lists(st.sampled_from(["--seed", "--dps", "--device", "--profile", "--out"]),
                                   max_size=3, unique=True)):
        args += [flag, data.draw(hostile_paths(d, d / "thesis.tex") if flag == "--out" else hostile_values())]
    if "--out" not in args:
        args += ["--out", d / "rep"]
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)
    _untouched_except(before, snapshot(d), _outputs(args, d), rc)


@settings(max_examples=examples(15), **_SETTINGS)
@given(argv=st.lists(st.one_of(hostile_values(), st.sampled_from(
    ["list", "--json", "verify", "simulate", "certify", "derive", "experiment", "--help", "--version", "-h"])),
    max_size=4))
def test_any_argument_vector(capsys, sandbox, fast_claims, argv):
    assume(not {"verify", "simulate", "certify", "derive", "experiment"} & set(argv[:1])
           or "--help" in argv or "-h" in argv or len(argv) == 1)
    try:
        rc, out, err = run_cli(capsys, argv)
    except SystemExit as exc:  # --help / --version: argparse exits 0 after printing
        assert exc.code in (0, None)
        return
    check_contract(rc, out, err)


# ---- experiment (grid and pretrained model stubbed: only the argument and output paths run) ------
@pytest.fixture
def fast_experiments(monkeypatch):
    pytest.importorskip("torch")
    from softpolar.experiments import _cmd

    def fake_grid(args, device, out):
        return {"table": [], "n_runs": 0, "train_seconds": 0.0, "figures": []}, "table"

    def fake_pretrained(args, device, out):
        return {"figures": []}, "table"

    monkeypatch.setattr(_cmd, "_grid_experiment", fake_grid)
    monkeypatch.setattr(_cmd, "_pretrained", fake_pretrained)


@settings(max_examples=examples(20), **_SETTINGS)
@given(data=st.data())
def test_experiment_hostile_arguments(capsys, sandbox, fast_experiments, data):
    d = sandbox.new()
    (d / "thesis.tex").write_text("keep")
    before = snapshot(d)
    args = ["experiment", data.draw(st.sampled_from(["induction", "classification"])), "--grid", "tiny"]
    for flag in data.draw(st.lists(st.sampled_from(["--scheduler", "--workers", "--seed", "--out", "--device"]),
                                   max_size=3, unique=True)):
        if flag == "--scheduler":
            value = data.draw(st.one_of(hostile_values(), st.sampled_from(
                ["http://127.0.0.1:8786", "tcp://", "tcp://host:99999", "tcp://[::1]:x", "inline"])))
        else:
            value = data.draw(hostile_paths(d, d / "thesis.tex") if flag == "--out" else hostile_values())
        args += [flag, value]
    if "--out" not in args:
        args += ["--out", d / "res"]
    if "--scheduler" not in args:
        args += ["--scheduler", "inline"]
    rc, out, err = run_cli(capsys, args)
    check_contract(rc, out, err)
    _untouched_except(before, snapshot(d), _outputs(args, d), rc)
