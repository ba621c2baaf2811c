"""Runs and grids: reproducibility, atomic resumable result files, dask dispatch, claims 31-33."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from softpolar.experiments import RunConfig, grid_configs, run_grid, train_run
from softpolar.experiments import claims, grid
from theorems import InvalidArgument

TINY = dict(d_model=16, n_heads=2, n_train=128, epochs=1, batch_size=64, n_eval=32,
            n_flip_pairs=10)


def _tiny(task="induction", **kw):
    extra = {} if task == "induction" else dict(positional="none", vocab_size=41, n_layers=1)
    return RunConfig(task=task, **{**TINY, **extra, **kw})


def test_train_run_is_reproducible_and_complete():
    cfg = _tiny(task="classification", n_heads=1)
    a, b = train_run(cfg, threads=1), train_run(cfg, threads=1)
    for key in ("accuracy", "curve", "bos_share", "max_share_cls", "flip_rate", "flip_rate_control",
                "final_train_loss"):
        assert a[key] == b[key], key
    assert a["run_id"] == cfg.run_id and len(a["flip_rate"]) == 1
    json.dumps(a)  # JSON-ready
    c = train_run(_tiny(task="classification", n_heads=1, seed=1), threads=1)
    assert c["final_train_loss"] != a["final_train_loss"]


def test_run_config_validation_and_ids():
    with pytest.raises(InvalidArgument):
        RunConfig(task="induction", lr=1)  # an int learning rate is a config typo
    with pytest.raises(InvalidArgument):
        RunConfig(task="translation")
    with pytest.raises(InvalidArgument):
        RunConfig.from_dict({"task": "induction", "learning_rate": 0.1})
    a, b = _tiny(), _tiny(seed=1)
    assert a.run_id != b.run_id and a.run_id == _tiny().run_id
    assert RunConfig.from_dict(a.to_dict()) == a


def test_grids_have_the_documented_sizes():
    assert len(grid_configs("induction", "smoke")) == 14  # the authors' 12 kernels + softmax1, gated-softmax
    assert len(grid_configs("induction", "small")) == 56
    assert len(grid_configs("induction", "paper")) == 8640
    assert len(grid_configs("classification", "smoke")) == 15
    assert len(grid_configs("classification", "small")) == 144
    assert len(grid_configs("classification", "paper")) == 12960
    with pytest.raises(InvalidArgument):
        grid_configs("induction", "huge")


def test_inline_grid_writes_atomic_files_and_resumes(tmp_path, monkeypatch):
    configs = [_tiny(attention="softmax"), _tiny(attention="sigmoid-unnorm")]
    first = run_grid(configs, tmp_path, scheduler="inline", progress=False)
    files = sorted((tmp_path / "runs").iterdir())
    assert [f.name for f in files] == sorted(f"{c.run_id}.json" for c in configs)
    assert not list(tmp_path.rglob("*.tmp")), "no temporary files are left behind"

    calls = []
    monkeypatch.setattr(grid, "execute", lambda *a, **k: calls.append(a) or {})
    again = run_grid(configs, tmp_path, scheduler="inline", progress=False)
    assert calls == [] and again == first, "finished runs are skipped"

    # a corrupt (e.g. half-written by another tool) file is rerun
    (tmp_path / "runs" / f"{configs[0].run_id}.json").write_text("{")
    monkeypatch.undo()
    third = run_grid(configs, tmp_path, scheduler="inline", progress=False)
    assert third[0]["accuracy"] == first[0]["accuracy"]


def test_failed_write_leaves_no_partial_file(tmp_path):
    class Boom:
        pass

    with pytest.raises(TypeError):
        grid.write_json_atomic(tmp_path / "x.json", {"bad": Boom()})
    assert list(tmp_path.iterdir()) == []


def test_divergence_is_recorded_not_raised(monkeypatch):
    def boom(cfg, **kw):
        raise FloatingPointError("non-finite loss")

    monkeypatch.setattr(grid, "train_run", boom)
    res = grid.execute(_tiny().to_dict())
    assert res["status"] == "diverged" and res["accuracy"] == 0.0


def test_dask_local_cluster_dispatch(tmp_path):
    import gc

    configs = [_tiny(attention="softmax")]
    res = run_grid(configs, tmp_path, scheduler="local", n_workers=1, processes=False,
                   progress=False)
    gc.collect()  # a socket leaked by the cluster would surface here, inside this test
    assert res[0]["status"] == "ok"
    assert res[0]["accuracy"] == train_run(configs[0], threads=1)["accuracy"], \
        "a dask run equals an in-process run"


def test_dask_scheduler_address_dispatch(tmp_path):
    from distributed import LocalCluster

    configs = [_tiny(attention="sigmoid-unnorm")]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address="127.0.0.1:0") as cluster:
        res = run_grid(configs, tmp_path, scheduler=cluster.scheduler_address, progress=False)
    assert res[0]["status"] == "ok" and (tmp_path / "runs" / f"{configs[0].run_id}.json").is_file()


def test_progress_bar_goes_to_the_given_stream():
    import io

    buf = io.StringIO()
    bar = grid.Progress("g", 2, stream=buf)
    bar.update(note="a")
    bar.update(note="b")
    bar.close()
    assert "[g]" in buf.getvalue() and "2/2" in buf.getvalue()


# ---------------------------------------------------------------------------------------
# claims 31-33: the verdict rules on synthetic results, each with its negative control
def _ind(kind, acc, share, key5=0.1):
    return {"status": "ok", "config": {"attention": kind}, "accuracy": acc, "gu_sink_rate": 0.5,
            "bos_share": [[0.1] * 4, share], "bos_share_signed": [[0.1] * 4, share],
            "share_key5": [[0.1] * 4, [key5] * 4], "seconds": 1.0}


def test_claim_31_rule_verifies_refutes_and_its_control_is_refuted():
    good = [_ind("softmax", 1.0, [0.99, 0.95, 0.97, 0.5]), _ind("sigmoid-unnorm", 0.99, [0.1] * 4),
            _ind("linear-unnorm", 0.99, [0.2] * 4)]
    verdict, _, evidence, _, _ = claims.rule_31(good)
    assert verdict == "verified" and "softmax 75%" in evidence
    verdict, _, _, counter, _ = claims.rule_31(good, key="share_key5")
    assert verdict == "refuted" and counter["sink_pct"] == 0.0  # no sinks on key 5
    bad = [_ind("softmax", 1.0, [0.99] * 4), _ind("sigmoid-unnorm", 0.99, [0.99] * 4)]
    assert claims.rule_31(bad)[0] == "refuted"
    weak = [_ind("softmax", 1.0, [0.2] * 4), _ind("sigmoid-unnorm", 0.99, [0.1] * 4)]
    assert claims.rule_31(weak)[0] == "refuted"
    assert claims.rule_31([_ind("softmax", 0.3, [0.99] * 4)])[0] == "inconclusive"
    # a control with no power: key 5 also looks like a sink
    leaky = [_ind("softmax", 1.0, [0.99] * 4, key5=0.95), _ind("sigmoid-unnorm", 1.0, [0.1] * 4)]
    assert claims.rule_31(leaky, key="share_key5")[0] == "verified"


def _cls(kind, L, H, flip, control=0.0, acc=1.0):
    return {"status": "ok", "config": {"attention": kind, "n_layers": L, "n_heads": H},
            "accuracy": acc, "max_share_cls": [[0.9]], "entropy_cls": [[0.1]],
            "flip_rate": [[flip]], "flip_rate_control": [[control]], "seconds": 1.0}


def test_claim_32_rule():
    good = [_cls("softmax", 1, 1, 0.9), _cls("softmax", 1, 4, 0.1), _cls("softmax", 2, 1, 0.3)]
    verdict, _, _, _, details = claims.rule_32(good)
    assert verdict == "verified" and details["flip_more_mean"] == pytest.approx(0.2)
    assert claims.rule_32(good, key="flip_rate_control")[0] == "refuted"
    assert claims.rule_32([_cls("softmax", 1, 1, 0.2), _cls("softmax", 1, 4, 0.1)])[0] == "refuted"
    assert claims.rule_32([_cls("softmax", 1, 1, 0.9), _cls("softmax", 1, 4, 0.85)])[0] == "refuted"
    assert claims.rule_32([_cls("softmax", 1, 1, 0.9, acc=0.5)])[0] == "inconclusive"


def _measure(rate, share):
    return {"gu_sink_rate": rate, "max_share_median": share, "massive_first_max": 1e4,
            "alpha0": [rate]}


def test_claim_33_rule_and_sanity_gate():
    sane = {"induction": {"accuracy_second_repeat": 0.7, "chance": 2e-5},
            "text": {"cross_entropy": 3.0, "uniform_cross_entropy": 10.8},
            "text_wrong_rope": {"cross_entropy": 4.6}}
    good = {"random": _measure(0.8, 0.55), "text": _measure(0.5, 0.45)}
    assert claims.rule_33(good, sane)[0] == "verified"
    verdict, _, _, counter, _ = claims.rule_33({"random": _measure(0.0, 0.05)}, None)
    assert verdict == "refuted" and counter["gu_sink_rate"] == 0.0
    broken = {**sane, "text_wrong_rope": {"cross_entropy": 2.0}}  # the wrong RoPE fits better
    assert claims.rule_33(good, broken)[0] == "inconclusive"


def test_claims_quick_profile_runs_nothing_and_says_why(tmp_path):
    for cid in claims.SPECS:
        res = claims.check_claim(cid, profile="quick", results_dir=tmp_path)
        assert res["verdict"] == "inconclusive" and "quick profile" in res["reason"]
        assert res["provenance"] and res["statement"] and res["seconds"] < 5
    with pytest.raises(InvalidArgument):
        claims.check_claim("30")


def test_claims_are_registered_for_verify(tmp_path, monkeypatch):
    from proofs_check import Context, registry, run_claim

    reg = registry()
    assert {"C31", "C32", "C33"} <= set(reg)
    c33 = reg["C33"]
    assert "NOT checked" in c33.statement and c33.expected == "verified"
    monkeypatch.setenv("SOFTPOLAR_EXPERIMENTS_DIR", str(tmp_path))
    res = run_claim(reg["C31"], Context(profile="quick"))
    assert res.outcome.verdict == "inconclusive" and not res.passed
    assert "quick profile" in res.to_json()["outcome"]["reason"]


def test_claims_quick_profile_reuses_a_finished_smoke_grid(tmp_path, monkeypatch):
    # pretend the classification smoke grid is the tiny one and has been run
    tiny = [_tiny(task="classification", n_heads=1), _tiny(task="classification", n_heads=2)]
    monkeypatch.setattr(grid, "grid_configs", lambda task, grid: tiny)
    run_grid(tiny, tmp_path / "classification-smoke", scheduler="inline", progress=False)
    res = claims.check_claim("32", profile="quick", results_dir=tmp_path)
    assert "quick profile" not in res["reason"]
    assert res["figures"] and all(p.endswith(".png") for p in res["figures"])
    ctrl = claims.check_claim("32", profile="quick", results_dir=tmp_path, control=True)
    assert ctrl["control"] is True and ctrl["details"].get("flip") in (None, "flip_rate_control")


def test_claim_figures_land_in_the_verify_report(tmp_path, monkeypatch):
    from proofs_check.report import environment, write_report
    from proofs_check import Context, registry, run_claim

    tiny = [_tiny(task="classification", n_heads=1), _tiny(task="classification", n_heads=2)]
    monkeypatch.setattr(grid, "grid_configs", lambda task, grid: tiny)
    run_grid(tiny, tmp_path / "exp" / "classification-smoke", scheduler="inline", progress=False)
    monkeypatch.setenv("SOFTPOLAR_EXPERIMENTS_DIR", str(tmp_path / "exp"))
    ctx = Context(profile="quick")
    res = run_claim(registry()["C32"], ctx)
    assert [f.filename for f in res.outcome.figures] == ["C32_flip_rates.png"]
    assert not res.control.figures  # the control's figures are the claim's: drawn once
    out = tmp_path / "report"
    data = write_report([res], out, environment(ctx, ["verify"]), 1.0)
    png = out / "C32_flip_rates.png"
    assert png.read_bytes() == (tmp_path / "exp" / "classification-smoke" / "flip_rates.png").read_bytes()
    assert "![Classification smoke grid" in (out / "report.md").read_text()
    assert "C32_flip_rates.png" in data["figures"]


# ---------------------------------------------------------------------------------------
# KSINK.* (ours): does softmax1 / gated softmax remove the sink? The rule, its control and the result files
def _alt(kind, acc, mass, key5=0.02, row=1.0):
    r = _ind(kind, acc, [mass] * 4)
    r.update({"bos_mass": [[0.1] * 4, [mass] * 4], "mass_key5": [[0.1] * 4, [key5] * 4],
              "row_mass": [[1.0] * 4, [row] * 4], "massive_ratio_first": [3.0, 4.0, 5.0],
              "gate_mean": None})
    return r


@pytest.mark.parametrize("kernel", ["softmax1", "gated-softmax"])
def test_ksink_rule_verdicts_and_its_control(kernel):
    same = [_alt("softmax", 1.0, 0.98), _alt(kernel, 1.0, 0.95, row=0.97)]
    verdict, _, evidence, counter, details = claims.rule_alt(same, kernel=kernel)
    assert verdict == "refuted" and counter["ratio"] == pytest.approx(0.95 / 0.98)
    assert "ratio" in evidence and details["ratio"] == counter["ratio"]
    # the control on the same data: the mass on key 5 is small, so the rule says "verified"
    assert claims.rule_alt(same, kernel=kernel, key="mass_key5")[0] == "verified"
    # witness: when the kernel's key-5 mass is as large as softmax's BOS mass the control is refuted too
    leaky = [_alt("softmax", 1.0, 0.98), _alt(kernel, 1.0, 0.95, key5=0.9)]
    assert claims.rule_alt(leaky, kernel=kernel, key="mass_key5")[0] == "refuted"
    # a kernel that really removes the sink is verified; one in the band or not learning is inconclusive
    assert claims.rule_alt([_alt("softmax", 1.0, 0.98), _alt(kernel, 1.0, 0.3)], kernel=kernel)[0] == "verified"
    assert claims.rule_alt([_alt("softmax", 1.0, 0.98), _alt(kernel, 1.0, 0.6)], kernel=kernel)[0] == "inconclusive"
    assert claims.rule_alt([_alt("softmax", 1.0, 0.98), _alt(kernel, 0.5, 0.1)], kernel=kernel)[0] == "inconclusive"
    old = _alt("softmax", 1.0, 0.98)
    del old["bos_mass"]  # a stored result written before the field existed
    assert claims.rule_alt([old, _alt(kernel, 1.0, 0.1)], kernel=kernel)[0] == "inconclusive"


def test_ksink_claims_are_registered_expected_refuted_and_quick_runs_nothing(tmp_path):
    from proofs_check import registry

    reg = registry()
    for cid in ("KSINK.softmax1", "KSINK.gated-softmax"):
        assert reg[cid].expected == "refuted" and reg[cid].provenance == "D" and reg[cid].profiles == ("full",)
        res = claims.check_claim(cid, profile="quick", results_dir=tmp_path)
        assert res["verdict"] == "inconclusive" and "quick profile" in res["reason"]


def test_stored_results_stay_valid_and_claims_read_only_the_kernels_they_need(tmp_path, monkeypatch):
    tiny = grid_configs("induction", "tiny")  # softmax, sigmoid-unnorm, softmax1, gated-softmax
    authors, new = tiny[:2], tiny[2:]
    folder = tmp_path / "induction-smoke"
    run_grid(authors, folder, scheduler="inline", progress=False)  # a folder from before the new kernels
    monkeypatch.setattr(grid, "grid_configs", lambda task, grid: tiny)
    found = claims.smoke_results("induction", folder, "quick", "inline", "cpu", False)
    assert [r["config"]["attention"] for r in found] == ["softmax", "sigmoid-unnorm"], \
        "claim 31 reads the authors' kernels only: the folder is complete for it"
    assert claims.smoke_results("induction", folder, "quick", "inline", "cpu", False,
                                 kinds=("softmax", "softmax1")) is None  # softmax1 not run yet
    # a stored run lacking a required field is not reused (and is rerun, then kept)
    path = grid.result_path(folder, authors[0])
    data = json.loads(path.read_text())
    del data["bos_mass"]
    path.write_text(json.dumps(data))
    assert grid.load_result(folder, authors[0]) is not None
    assert grid.load_result(folder, authors[0], require=("bos_mass",)) is None
    run_grid([authors[0], new[0]], folder, scheduler="inline", progress=False, require=("bos_mass",))
    assert "bos_mass" in json.loads(path.read_text())
    res = claims.check_claim("KSINK.softmax1", profile="quick", results_dir=tmp_path)
    assert "quick profile" not in res["reason"] and res["details"]["mass"] == "bos_mass"
    assert res["verdict"] == "inconclusive" and "95%" in res["reason"]  # the tiny models do not learn


# ---------------------------------------------------------------------------------------
# less CPU per verify run: one kept cluster, one full-eval forward pass for the flip tests, figures drawn once
def _same_numbers(a, b):
    drop = ("seconds", "cpu_seconds")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


def test_a_local_cluster_is_kept_for_the_next_grid_and_closed(tmp_path, monkeypatch):
    grid.close_kept_cluster()
    starts = []
    real = grid._start_local
    monkeypatch.setattr(grid, "_start_local", lambda *a: starts.append(a) or real(*a))
    local = dict(scheduler="local", n_workers=1, processes=False, progress=False)
    try:
        run_grid([_tiny(attention="uniform")], tmp_path / "o", **local)
        assert not grid.kept_cluster(), "without keep_cluster the cluster is closed after its grid"
        first = run_grid([_tiny(attention="softmax")], tmp_path / "a", keep_cluster=True, **local)
        kept = grid.kept_cluster()["cluster"]
        second = run_grid([_tiny(attention="sigmoid-unnorm")], tmp_path / "b", keep_cluster=True, **local)
        assert len(starts) == 2 and grid.kept_cluster()["cluster"] is kept, "the next grid reuses the kept cluster"
        profiled = grid.kept_cluster()["client"].run(lambda dask_worker: "profile" in dask_worker.periodic_callbacks)
        assert profiled and not any(profiled.values()), "the workers run no statistical profiler"
        run_grid([_tiny(attention="softmax1")], tmp_path / "c", keep_cluster=True, **{**local, "n_workers": 2})
        assert len(starts) == 3 and kept.status.name == "closed", "another shape: the kept one is closed"
    finally:
        grid.close_kept_cluster()
    assert not grid.kept_cluster()
    # the numbers do not depend on the cluster: as an in-process run, bit for bit
    inline = run_grid([_tiny(attention="softmax"), _tiny(attention="sigmoid-unnorm")], tmp_path / "i",
                      scheduler="inline", progress=False)
    assert _same_numbers(first[0], inline[0]) and _same_numbers(second[0], inline[1])


def test_the_default_number_of_local_workers_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(grid.WORKERS_ENV, "1")
    assert grid.default_workers() == 1
    monkeypatch.delenv(grid.WORKERS_ENV)
    assert grid.default_workers() == grid.usable_cores() and grid.default_workers("cuda:0") == 1
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(grid.WORKERS_ENV, bad)
        with pytest.raises(InvalidArgument, match=grid.WORKERS_ENV):
            grid.default_workers()


def test_flip_tests_reuse_the_eval_forward_pass_and_get_the_same_rates(monkeypatch):
    from softpolar.experiments import _train

    cfg = _tiny(task="classification", n_heads=2)
    calls = []
    real_forward = _train._forward_np
    monkeypatch.setattr(_train, "_forward_np", lambda *a, **k: calls.append(1) or real_forward(*a, **k))
    cached = train_run(cfg, threads=1)
    # 1 forward pass on the eval set, then one per flip test on the mixed inputs (2 heads x test and control)
    assert len(calls) == 1 + 2 * 2
    # the same rates when every flip test computes the eval set's forward pass itself (a copy is not reused)
    real_flip = _train.single_token_flip_rate
    monkeypatch.setattr(_train, "single_token_flip_rate",
                        lambda predict, inputs, *a, **k: real_flip(predict, inputs.copy(), *a, **k))
    calls.clear()
    fresh = train_run(cfg, threads=1)
    assert len(calls) == 1 + 2 * 2 * 2
    assert fresh["flip_rate"] == cached["flip_rate"] and fresh["flip_rate_control"] == cached["flip_rate_control"]
    assert _same_numbers(fresh, cached)


def test_the_control_reuses_the_claims_figures(tmp_path, monkeypatch):
    tiny = [_tiny(task="classification", n_heads=1), _tiny(task="classification", n_heads=2)]
    monkeypatch.setattr(grid, "grid_configs", lambda task, grid: tiny)
    run_grid(tiny, tmp_path / "classification-smoke", scheduler="inline", progress=False)
    drawn = []
    real = claims._draw_figures
    monkeypatch.setattr(claims, "_draw_figures", lambda *a: drawn.append(a[0]) or real(*a))
    res = claims.check_claim("32", profile="quick", results_dir=tmp_path)
    ctrl = claims.check_claim("32", profile="quick", results_dir=tmp_path, control=True)
    assert drawn == ["classification"] and ctrl["figures"] == res["figures"]
    for p in res["figures"]:  # a figure removed in between is drawn again
        Path(p).unlink()
    assert claims.check_claim("32", profile="quick", results_dir=tmp_path)["figures"] == res["figures"]
    assert drawn == ["classification"] * 2


def test_full_ksink_trains_both_added_kernels_in_one_grid(tmp_path, monkeypatch):
    tiny = grid_configs("induction", "tiny")  # softmax, sigmoid-unnorm, softmax1, gated-softmax
    monkeypatch.setattr(grid, "grid_configs", lambda task, grid: tiny)
    grids = []
    real = grid.run_grid
    monkeypatch.setattr(grid, "run_grid", lambda configs, *a, **k: grids.append(
        [c.attention for c in configs]) or kept.append(k.get("keep_cluster")) or real(configs, *a, **k))
    kept = []
    res = claims.check_claim("KSINK.softmax1", profile="full", results_dir=tmp_path, scheduler="inline")
    again = claims.check_claim("KSINK.gated-softmax", profile="full", results_dir=tmp_path, scheduler="inline")
    assert grids == [["softmax", "softmax1", "gated-softmax"]] * 2
    assert kept == [True, True], "a claim's grid keeps its local cluster for the next claim's grid"
    folder = tmp_path / "induction-smoke"
    assert all(grid.load_result(folder, c) is not None for c in tiny if c.attention != "sigmoid-unnorm")
    assert res["details"]["mass"] == again["details"]["mass"] == "bos_mass"
    assert res["verdict"] == again["verdict"] == "inconclusive"  # the tiny models do not learn


def _grid_in_a_pool_worker(out):

    grid.run_grid([_tiny(attention="softmax")], out, progress=False, keep_cluster=True, n_workers=1)
    import time

    workers = sum(grid.kept_cluster()["client"].run(time.process_time).values())
    return workers, time.process_time()


@pytest.mark.slow
def test_a_claim_process_of_verify_jobs_closes_its_kept_cluster_when_it_ends(tmp_path):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # verify --jobs forks its claim processes; they end with os._exit (no atexit), and a cluster they kept
    # would lose its parent (its workers then die with tracebacks and leaked semaphores)
    import resource

    def reaped():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    before = reaped()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        workers, own = pool.submit(_grid_in_a_pool_worker, tmp_path / "g").result()
    # the cluster was closed and its worker reaped before the claim process ended: its CPU reaches the parent
    assert workers > 0.5 and reaped() - before >= own + workers


def test_a_dask_grid_hands_out_the_longest_runs_first(tmp_path, monkeypatch):
    """On one worker the runs finish in the order dask handed them out: longest estimated first (the grid's order
    among equal estimates); the results still come back in the grid's order."""
    configs = [_tiny(attention="softmax", seed=s, epochs=e) for s, e in ((0, 1), (1, 3), (2, 1), (3, 2))]
    cost = [grid.run_cost(c) for c in configs]
    assert cost[1] == pytest.approx(3 * cost[0]) and cost[3] == pytest.approx(2 * cost[0]) and cost[2] == cost[0]
    written = []
    real = grid.write_json_atomic
    monkeypatch.setattr(grid, "write_json_atomic", lambda path, res: (written.append(res["run_id"]), real(path, res)))
    res = run_grid(configs, tmp_path, scheduler="local", n_workers=1, processes=False, progress=False)
    assert written == [configs[i].run_id for i in (1, 3, 0, 2)]
    assert [r["run_id"] for r in res] == [c.run_id for c in configs]


def test_run_cost_orders_the_grid_shapes_as_measured():
    """The estimate's ratios are the measured ones it was fitted to (module docstring): two layers, four heads, a
    doubled d_model, a quarter of the batch at the same data cost more / the same."""
    base = RunConfig(task="classification", positional="none", vocab_size=41, n_layers=1, n_heads=1, d_model=64,
                     n_train=10_000, epochs=10, batch_size=256)
    cost = grid.run_cost
    assert cost(replace(base, d_model=128)) / cost(base) == pytest.approx(2.74, abs=0.01)
    assert cost(replace(base, n_heads=4)) / cost(base) == pytest.approx(1.15)
    assert cost(replace(base, n_layers=2)) / cost(base) == pytest.approx(2.0)
    assert cost(replace(base, batch_size=64)) == cost(base)  # same sequences seen, same tokens
    smoke = grid_configs("classification", "smoke")
    assert max(smoke, key=cost) == smoke[-1] and smoke[-1].n_layers == 2 and smoke[-1].n_heads == 4
