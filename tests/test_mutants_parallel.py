"""`softpolar verify --mutants --jobs N`: the mutants run side by side, one forked process per mutant, with the
report of the serial run; a patch never leaves its process; a lost process loses no cell; and a mutant run
keeps the Context's settings (``verify --engines``)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import types

import pytest

from proofs_check.mutation import checker_mutants as CM
from proofs_check.mutation import forked
from proofs_check.mutation import mutants as M
from proofs_check import parallel as _parallel, catalog as _registry
from proofs_check import ENGINE_SETTINGS, Claim, Context, Control, Outcome, Witness
from numerics import FlowRHS
from softpolar import main

needs_fork = pytest.mark.skipif(not _parallel.can_fork(), reason="no fork start method: mutants run serially")


def _no_seconds(x):
    """``x`` without its ``seconds`` fields (wall times differ from run to run), order kept."""
    if isinstance(x, dict):
        return {k: _no_seconds(v) for k, v in x.items() if k not in ("seconds", "total_seconds")}
    if isinstance(x, list):
        return [_no_seconds(v) for v in x]
    return x


def _line_key(line: str) -> str:
    return re.sub(r"\s+[0-9.]+ s$", "", line)


@needs_fork
def test_jobs_2_gives_the_serial_report_on_real_mutants():
    reg = _registry.registry()
    claims = [reg[c] for c in ("C09", "C10", "C24", "C15")]
    mutants = tuple(M.mutant(n) for n in ("flow.da_sign", "flow.da_zero", "test.non_strict",
                                                 "reduced.du_scale2"))
    logs = {1: [], 2: []}
    out = {j: M.run_mutants(claims, Context(), mutants, jobs=j, log=logs[j].append) for j in (1, 2)}
    serial, par = (_no_seconds(out[j]) for j in (1, 2))
    # same cells, rows, witnesses, summary, in the same order (json.dumps keeps the key order)
    assert json.dumps(serial) == json.dumps(par)
    assert serial["matrix"]["C15"]["reduced.du_scale2"]["outcome"] == "equivalent"  # decided in its process
    assert serial["matrix"]["C10"]["flow.da_sign"]["killed"] and list(serial["witnesses"]) == ["C09", "C10",
                                                                                                 "C24", "C15"]
    assert sorted(map(_line_key, logs[1])) == sorted(map(_line_key, logs[2]))  # every progress line, once
    # the witnesses' seconds are kept: a later run starts its longest units first
    assert all("seconds" in w for w in out[2]["witnesses"].values())


#: what the throw-away mutants below patch; a test reads it in this process after the run
_HOLDER = types.SimpleNamespace(value="original")


def _holder_claim(cid: str, tag: str) -> Claim:
    """A claim aimed at by mutants tagged ``tag``: verified iff ``_HOLDER.value`` is still ``"original"``."""
    def check(ctx):
        seen = _HOLDER.value
        return Outcome("verified" if seen == "original" else "refuted", f"holder {seen} in pid {os.getpid()}",
                       counterexample=None if seen == "original" else {"holder": seen})

    return Claim(id=cid, title="t", statement="s", provenance="D", assumptions="-",
                 evidence_kind="exact symbolic proof", check_description="reads _HOLDER", expected="verified",
                 check=check, control=Control("the opposite", lambda ctx: Outcome("refuted", "x",
                                                                                   counterexample={"x": 1})),
                 engines=(tag,), group=cid)


@contextlib.contextmanager
def _leaky():
    """A planted patch that is never undone (a mutant whose patch leaks)."""
    _HOLDER.value = "patched"
    yield


def _mutant_of(name, tag, patch):
    return M.Mutant(name, f"test mutant {name}", (tag,), patch)


@needs_fork
def test_a_patch_stays_in_its_process():
    claims = [_holder_claim("HOLD1", "test.holder")]
    leaky = _mutant_of("test.leaky", "test.holder", _leaky)
    reader = _mutant_of("test.reader", "test.holder", contextlib.nullcontext)
    real = M.mutant("flow.da_sign")
    rhs_call = FlowRHS.__call__
    parent = os.getpid()
    out = M.run_mutants(claims, Context(), (leaky, reader, real), jobs=2)
    cells = out["matrix"]["HOLD1"]
    assert cells["test.leaky"]["outcome"] == "killed"  # its own process saw the patch
    assert cells["test.reader"]["outcome"] == "survived"  # another mutant's process never does, in any order
    assert not cells["test.leaky"]["evidence"].endswith(f" pid {parent}")  # it ran in a process of its own
    assert _HOLDER.value == "original"  # ... and this process is untouched
    assert FlowRHS.__call__ is rhs_call  # a real mutant's patched object too


@needs_fork
def test_a_killed_mutant_process_loses_no_cell(capsys):
    parent = os.getpid()

    @contextlib.contextmanager
    def killer():
        if os.getpid() != parent:  # dies in its worker; in this process it is harmless
            os.kill(os.getpid(), signal.SIGKILL)
        yield

    claims = [_holder_claim("HOLD1", "test.holder"), _holder_claim("HOLD2", "test.holder")]
    mutants = (_mutant_of("test.killer", "test.holder", killer),
               _mutant_of("test.reader", "test.holder", contextlib.nullcontext))
    par = M.run_mutants(claims, Context(), mutants, jobs=2)
    err = capsys.readouterr().err
    assert "mutant process died" in err and "runs in this process" in err
    serial = M.run_mutants(claims, Context(), mutants, jobs=1)
    def text(x):  # the pids aside
        return re.sub(r" pid [0-9]+", " pid", json.dumps(_no_seconds(x)))
    assert text(par) == text(serial)
    assert set(par["matrix"]["HOLD1"]) == {"test.killer", "test.reader"}
    assert par["matrix"]["HOLD2"]["test.killer"]["evidence"].endswith(f" pid {parent}")  # rerun here, not made up


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_mutant_run_keeps_the_engines_of_verify(tmp_path, monkeypatch, jobs):
    """Under ``--engines baseline`` the claims re-run under a mutant (and the witnesses) see the baseline
    settings; before, ``ctx_like`` rebuilt the Context without them (the current engines)."""
    if jobs == "2" and not _parallel.can_fork():
        pytest.skip("no fork start method: mutants run serially")

    def engines_outcome(ctx, want):
        ok = ctx.engines.name == want
        return Outcome("verified" if ok else "refuted", f"engines {ctx.engines.name}",
                       counterexample=None if ok else {"engines": ctx.engines.name})

    claim = Claim(id="ENGM", title="t", statement="s", provenance="D", assumptions="-",
                  evidence_kind="exact symbolic proof", check_description="reads ctx.engines", expected="verified",
                  check=lambda ctx: engines_outcome(ctx, "baseline"),
                  control=Control("the opposite", lambda ctx: Outcome("refuted", "x", counterexample={"x": 1})),
                  witness=Witness(description="reads ctx.engines", run=lambda ctx: engines_outcome(ctx, "baseline")),
                  engines=("test.engines",), group="ENGM")
    reg = _registry.registry()
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, "ENGM": claim})
    monkeypatch.setattr(M, "_GROUPS", dict(M._GROUPS))
    M.register_mutant_group(M.MutantGroup("test.engines", "test", (
        M.Mutant("test.engines_noop", "no bug", ("test.engines",), contextlib.nullcontext),)))
    out = tmp_path / "r"
    assert main(["verify", "--claims", "ENGM", "--engines", "baseline", "--mutants", "test.engines_noop",
                 "--jobs", jobs, "--out", str(out)]) == 0
    mut = json.loads((out / "report.json").read_text(encoding="utf-8"))["mutation"]
    cell = mut["matrix"]["ENGM"]["test.engines_noop"]
    assert cell["check"] == "verified" and cell["evidence"] == "engines baseline", cell
    assert mut["witnesses"]["ENGM"]["passes"] and mut["witnesses"]["ENGM"]["evidence"] == "engines baseline"
    base = ENGINE_SETTINGS["baseline"]
    assert M.ctx_like(Context(engines=base, seed=3, dps=40)) == Context(engines=base, seed=3, dps=40)


@needs_fork
def test_checker_mutants_side_by_side_give_the_serial_rows():
    chosen = tuple(m for m in CM.MUTANTS if m.name in ("prover.contract_out_of_range", "prover.unknown_as_outside"))
    harmless = CM.CheckerMutant("noop", "generic prover", "nothing", lambda: [], ("prover-soundness",))
    lines = []
    serial = CM.run_checker_mutants(chosen + (harmless,))
    par = CM.run_checker_mutants(chosen + (harmless,), jobs=2, log=lines.append)
    assert json.dumps(_no_seconds(serial)) == json.dumps(_no_seconds(par))
    assert par["caught"] == 2 and [r["name"] for r in par["mutants"]] == [m.name for m in chosen] + ["noop"]
    assert sum(line.startswith("noop: caught by none") for line in lines) == 1


def test_units_start_longest_first_by_the_previous_report(tmp_path):
    reg = _registry.registry()
    claims = [reg[c] for c in ("C09", "C10", "C24")]
    mutants = tuple(M.mutant(n) for n in ("flow.da_sign", "flow.da_zero", "law.rate_exponent"))
    (tmp_path / "report.json").write_text(json.dumps({
        "environment": {"profile": "quick"},
        "mutation": {"mutants": [{"name": "flow.da_zero", "seconds": 30.0}], "groups": [],
                     "witnesses": {"C24": {"seconds": 12.0}},
                     "checker_mutants": {"mutants": [{"name": "box.drop_u_gap", "seconds": 7.0}]}}}))
    known = M.previous_seconds("quick", tmp_path)
    assert known["flow.da_zero"] == 30.0 and known["witness C24"] == 12.0 and known["box.drop_u_gap"] == 7.0
    assert "flow.da_zero" not in M.previous_seconds("full", tmp_path)  # another profile's times: not used
    wclaims = claims
    wunits = _parallel.units(wclaims)  # calculus (C09, C10), regression (C24)
    tasks = [("m", i) for i in range(3)] + [("w", j) for j in range(len(wunits))]
    est = M.unit_estimates(tasks, mutants, wclaims, wunits, "quick", tmp_path)
    # the report's seconds, else the static table, else 1 s
    assert est[("m", 1)] == 30.0 and est[("m", 0)] == M.DEFAULT_MUTANT_SECONDS["quick"]["flow.da_sign"]
    assert est[("m", 2)] == 1.0
    assert M.start_order(tasks, est) == [("m", 0), ("m", 1), ("w", 1), ("w", 0), ("m", 2)]
    assert est[("w", 0)] == 2.0 and est[("w", 1)] == 12.0  # 1 s per witness not in the report


@needs_fork
def test_a_mutant_process_forked_after_torch_ran_on_threads_here_does_not_hang(tmp_path):
    """The verify process may have run torch on several threads before the mutants fork (claims that form one
    unit run there): a child on several OpenMP threads then hangs in its first parallel region. The mutant
    processes run torch on CHILD_THREADS = 1 thread, and return."""
    pytest.importorskip("torch")
    import subprocess
    import sys

    code = ("import torch\nfrom proofs_check.mutation.forked import run_forked\ntorch.set_num_threads(2)\n"
            "x = torch.randn(4_000_000)\nfor _ in range(3): (x * 2).exp().sum()\ngot = {}\n"
            "def task(t, log):\n    (x * 2).exp().sum()\n    return torch.get_num_threads()\n"
            "run_forked([0], task, jobs=1, on_done=got.__setitem__)\nprint('threads', got[0])")
    # jobs=1: one share of every CPU, where a child used to get as many threads
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "threads 1", proc.stderr[-1500:]


@needs_fork
def test_a_unit_that_raises_or_returns_what_cannot_travel_is_an_error_here():
    def boom(task, log):
        raise ValueError(f"planted failure in unit {task}")

    with pytest.raises(ValueError, match="planted failure in unit [01]") as info:  # whichever answers first
        M.run_forked([0, 1], boom, jobs=2, on_done=lambda t, v: None)
    assert any("raised in the mutant process" in note for note in info.value.__notes__)
    with pytest.raises(RuntimeError, match="could not be sent back"):
        M.run_forked([0], lambda task, log: (lambda: None), jobs=1, on_done=lambda t, v: None)


@needs_fork
def test_a_process_that_answers_but_does_not_exit_is_ended(monkeypatch):
    import threading
    import time

    monkeypatch.setattr(forked, "EXIT_GRACE_SECONDS", 0.5)

    def leaves_a_thread(task, log):  # a non-daemon thread keeps a process from exiting
        threading.Thread(target=time.sleep, args=(3600,)).start()
        return task * 10

    got = {}
    M.run_forked([1, 2], leaves_a_thread, jobs=2, on_done=got.__setitem__)
    assert got == {1: 10, 2: 20}


@needs_fork
def test_group_mutants_with_their_own_evaluate_run_side_by_side(monkeypatch):
    monkeypatch.setattr(M, "_GROUPS", dict(M._GROUPS))
    weak = tuple(M.Mutant(f"checker.test_{k}", f"weakened {k}", ("checker.test",), contextlib.nullcontext)
                 for k in range(3))
    parent = os.getpid()
    M.register_mutant_group(M.MutantGroup(
        "checkers.test", "test group", weak,
        evaluate=lambda m, ctx: {"outcome": "killed" if m.name != "checker.test_1" else "survived",
                                 "caught_by": "tamper suite", "evidence": f"elsewhere: {os.getpid() != parent}"}))
    claims = [_holder_claim("HOLD1", "test.holder")]
    reader = _mutant_of("test.reader", "test.holder", contextlib.nullcontext)
    serial = M.run_mutants(claims, Context(), weak + (reader,), jobs=1)
    par = M.run_mutants(claims, Context(), weak + (reader,), jobs=2)
    assert [r["name"] for r in par["groups"]] == [m.name for m in weak]
    assert {r["evidence"] for r in par["groups"]} == {"elsewhere: True"}  # evaluated in the mutant processes
    assert {r["evidence"] for r in serial["groups"]} == {"elsewhere: False"}
    strip = lambda out: re.sub(r"elsewhere: \w+| pid [0-9]+", "", json.dumps(_no_seconds(out)))
    assert strip(par) == strip(serial)
    assert par["summary"]["checker_mutants_not_caught"] == ["checker.test_1"]
