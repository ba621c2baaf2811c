"""Bench row 15 (verify against the code of the issue's day, claim by claim): the verdict comparison, the
issue-day tree, and the smoke run."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from softpolar.benchmarks import row_verify_profile as P  # row 15: verify against the code of the issue's day
from softpolar.benchmarks import run_rows

from .test_benchmarks import _check_report

NAMES = ("issue-day", "serial", "parallel")


def _c(cid, verdict="verified", wall=1.0, cpu=0.5):
    return {"id": cid, "verdicts": (verdict, "refuted", verdict == "verified"), "wall": wall, "cpu": cpu}


def test_claim_fact_sums_and_says_what_is_missing():
    rows = [{"issue-day_wall": 4.0, "serial_wall": 2.0, "parallel_wall": 1.0, "issue-day_cpu": None,
             "serial_cpu": 1.5, "parallel_cpu": 1.25},
            {"issue-day_wall": 5.0, "serial_wall": 3.0, "parallel_wall": 2.0, "issue-day_cpu": None,
             "serial_cpu": 0.5, "parallel_cpu": 0.25}]
    fact = P.claim_fact("q", "two", rows, NAMES)
    assert fact["value"] == "9.0 s / 5.0 s / 3.0 s; CPU - s / 2.0 s / 1.5 s"
    assert "wall issue-day / serial / parallel" in fact["label"]
    rows[1]["issue-day_wall"] = None  # a claim the issue-day tree does not have
    assert P.claim_fact("q", "two", rows, NAMES)["value"].startswith("- s / 5.0 s")


def test_compare_matches_the_issue_day_claims_and_refuses_other_verdicts():
    old = [_c("C01", wall=2.0), _c("C31", wall=9.0, cpu=None)]
    now = [_c("C01", wall=1.0), _c("C31", wall=5.0), _c("SINK1", wall=3.0)]
    table = P.compare({"issue-day": old, "serial": now, "parallel": now})
    assert [r["id"] for r in table["rows"]] == ["C31", "C01", "SINK1"]  # issue-day wall first, then the new ones
    assert table["claims"] == 3 and table["common"] == 2 and table["new"] == ["SINK1"]
    assert table["rows"][2]["issue-day_wall"] is None and table["rows"][0]["serial_wall"] == 5.0
    # a claim whose verdict changed since the issue's day
    with pytest.raises(RuntimeError, match="between issue-day and serial: claim C31"):
        P.compare({"issue-day": [_c("C01"), _c("C31", verdict="refuted")], "serial": now, "parallel": now})
    # a claim of the issue-day tree that is gone today
    with pytest.raises(RuntimeError, match="C99 of the issue-day run is missing"):
        P.compare({"issue-day": old + [_c("C99")], "serial": now, "parallel": now})
    # today's runs among themselves: same verdicts in the same order
    with pytest.raises(RuntimeError, match="between serial and parallel"):
        P.compare({"issue-day": old, "serial": now, "parallel": now[::-1]})
    with pytest.raises(RuntimeError, match="between serial and parallel"):
        P.compare({"issue-day": old, "serial": now, "parallel": now[:2]})


def test_compare_reads_the_same_claims_run_on_its_own_claims():
    old = [_c("C01"), _c("C31")]
    now = [_c("C01"), _c("C31"), _c("SINK1")]
    table = P.compare({"issue-day": old, "serial": now, "parallel": now, "same-claims": now[:2]})
    assert table["rows"][2]["same-claims_wall"] is None
    with pytest.raises(RuntimeError, match="between serial and same-claims"):
        P.compare({"issue-day": old, "serial": now, "parallel": now,
                 "same-claims": [_c("C01"), _c("C31", verdict="refuted")]})


def test_targets_are_the_issues():
    assert P.TARGETS == {"quick": 1.5, "full": 1.8}


def test_no_checkout_or_no_commit_is_unavailable_and_says_which(tmp_path):
    assert P.repo_root(Path("/proc/self")) is None  # nothing above /proc has .git
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    with pytest.raises(P.Unavailable, match=P.ISSUE_DAY_COMMIT[:12]):
        P.issue_day_tree(tmp_path / "tree", repo=tmp_path / "repo")
    assert not (tmp_path / "tree").exists()


def _has_commit() -> bool:
    root = P.repo_root()
    try:
        return root is not None and subprocess.run(
            ["git", "-C", str(root), "cat-file", "-e", P.ISSUE_DAY_COMMIT + "^{commit}"],
            capture_output=True).returncode == 0
    except FileNotFoundError:  # no git
        return False


@pytest.mark.skipif(not _has_commit(), reason="needs a git checkout holding the issue-day commit")
def test_the_issue_day_tree_is_that_commit_and_imports_from_itself(tmp_path):
    src = P.issue_day_tree(tmp_path / "tree")
    assert all((src / p / "__init__.py").is_file() for p in P.PACKAGES)
    assert not (src / "proofs_check" / "_parallel.py").exists()  # that commit ran the claims one after another
    P.check_imports_from(src, P.env_first(src))
    # the check can fail: a tree missing a package imports it from elsewhere (today's install)
    (src / "theorems" / "__init__.py").rename(src / "theorems" / "moved.py")
    env = P.env_first(src)
    env["PYTHONPATH"] += os.pathsep + str(Path(__file__).resolve().parents[1])
    with pytest.raises(RuntimeError, match="does not import from"):
        P.check_imports_from(src, env)


@pytest.mark.slow
def test_smoke_row_15_is_well_formed():
    report = run_rows([15], mode="smoke")
    _check_report(report, [15])
    row = report["rows"][0]
    if not _has_commit():
        assert row["status"] == "not available" and P.ISSUE_DAY_COMMIT[:12] in row["reason"]
        return
    assert row["status"] == "ok", row.get("reason")
    assert [ln["ratio_label"] for ln in row["lines"]] == ["issue-day/parallel", "issue-day/same-claims",
                                                          "serial/parallel"]
    assert "verdicts identical on the 2 claims both have (asserted)" in row["lines"][0]["notes"]
    claims = [f for f in row["facts"] if ": claim " in f["label"]]
    assert {f["label"].split("claim ")[1].split(",")[0] for f in claims} == {"C02", "C14"}
    # 4 walls measured; CPU: the issue-day reports have none, today's three do
    assert all(f["value"].startswith(tuple("0123456789")) and f["value"].count("- s") == 1 for f in claims)


def test_ceilings_divide_the_issue_day_wall_by_the_cpu_work_per_core():
    res = {"issue-day": {"wall_s": 600.0}, "parallel": {"cpu_s": 800.0}, "same-claims": {"cpu_s": 600.0}}
    per = {"parallel": [{"id": "T1", "cpu": 300.0}, {"id": "T2", "cpu": 100.0}, {"id": "X", "cpu": 400.0}]}
    groups = {"T1": P.TRAINING_GROUP, "T2": P.TRAINING_GROUP, "X": "logistic"}
    c = P.ceilings(res, per, 2, groups)
    assert c["whole"] == 600.0 / 400.0 and c["same_claims"] == 600.0 / 300.0
    assert c["training_cpu_s"] == 400.0 and c["training"] == 600.0 / 200.0
    fact = P.ceiling_fact("verify --profile full", c, res, 2, 1.8)
    assert fact["value"] == "1.50x whole profile; 2.00x same claims; 3.00x training alone"
    assert "took 400 CPU s of it, 200 s on 2 cores" in fact["notes"] and "target 1.8x" in fact["notes"]
    # without the training claims' CPU seconds (or without such claims) there is no training ceiling
    per["parallel"][0]["cpu"] = None
    assert P.ceilings(res, per, 2, groups)["training"] is None
    assert P.ceilings({k: v for k, v in res.items() if k != "same-claims"}, per, 2, {})["same_claims"] is None


def test_the_training_group_is_the_registered_transformer_claims():
    members = {cid for cid, g in P.claim_groups().items() if g == P.TRAINING_GROUP}
    assert {"C31", "C32"} <= members


def test_the_whole_profile_line_has_no_target_when_it_compares_different_work():
    """Issue 40: 68 claims today against 52 then is not like for like; the target sits on the same-claims line."""
    res = {"issue-day": {"wall_s": 74.0}, "serial": {"wall_s": 135.0}, "parallel": {"wall_s": 73.0},
           "same-claims": {"wall_s": 28.0}}
    table = {"claims": 68, "common": 52, "new": ["BANDIT", "FORMAL"]}
    lines = P.profile_lines("verify --profile quick", res, table, 1.5, "common")
    by = {ln["ratio_label"]: ln for ln in lines}
    assert list(by) == ["issue-day/parallel", "issue-day/same-claims", "serial/parallel"]
    whole = by["issue-day/parallel"]
    assert whole["target"] is None and whole["met"] is None
    assert whole["notes"].startswith("no target: not like for like, today's profile holds 68 claims against 52")
    assert by["issue-day/same-claims"]["target"] == ">= 1.5" and by["issue-day/same-claims"]["met"] is True
    assert by["serial/parallel"]["target"] == ">= 1.5" and by["serial/parallel"]["met"] is True
    # the same claims on both sides (no new claim, no same-claims child): the whole-profile line keeps the target
    # and can miss it
    same = P.profile_lines("c", {k: res[k] for k in ("issue-day", "serial", "parallel")},
                         {"claims": 52, "common": 52, "new": []}, 1.5, "common")
    assert same[0]["target"] == ">= 1.5" and same[0]["met"] is False
