"""`softpolar verify --engines`: the engine settings reach every check through ``ctx.engines`` (also in the
worker processes of ``--jobs``), are recorded in report.json, and a bad name exits 2."""
from __future__ import annotations

import json

import pytest

from proofs_check import parallel as _parallel, catalog as _registry
from proofs_check import ENGINE_SETTINGS, Claim, Engines
from proofs_check.claims import high_precision_backend
from proofs_check import Context, Control, Outcome
from softpolar import main


def _read(out):
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def _engine_claim(cid: str) -> Claim:
    """A claim that is verified iff its check ran under the baseline settings (and its control the opposite)."""
    def outcome(verdict):
        return Outcome(verdict, "read ctx.engines", counterexample={"engines": "current"} if verdict == "refuted"
                       else None)

    def check(ctx):
        return outcome("verified" if ctx.engines.name == "baseline" else "refuted")

    def control(ctx):
        return outcome("refuted" if ctx.engines.name == "baseline" else "verified")

    return Claim(id=cid, title="engines reach the check", statement="x", provenance="D", assumptions="-",
                 evidence_kind="exact symbolic proof", check_description="reads ctx.engines", expected="verified",
                 check=check, control=Control("the opposite", control), group=cid)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_engines_reach_the_checks_and_the_report(tmp_path, monkeypatch, jobs):
    if jobs == "2" and not _parallel.can_fork():
        pytest.skip("no fork start method: verify runs serially")
    reg = _registry.registry()
    extra = {"ENGA": _engine_claim("ENGA"), "ENGB": _engine_claim("ENGB")}  # two groups: two processes
    monkeypatch.setattr(_registry, "registry", lambda: {**reg, **extra})
    base, cur = tmp_path / "base", tmp_path / "cur"
    assert main(["verify", "--claims", "ENGA,ENGB", "--engines", "baseline", "--jobs", jobs, "--out", str(base)]) == 0
    assert main(["verify", "--claims", "ENGA,ENGB", "--jobs", jobs, "--out", str(cur)]) == 1  # current: refuted
    b, c = _read(base)["environment"], _read(cur)["environment"]
    from numerics import taylor_available

    assert b["engines"] == {"name": "baseline", "high_precision": "mpmath", "box": "baseline",
                            "high_precision_backend": "mpmath"}
    assert c["engines"] == {"name": "current", "high_precision": "auto", "box": "default",
                            "high_precision_backend": "taylor" if taylor_available() else "mpmath"}
    assert b["command"][b["command"].index("--engines") + 1] == "baseline"
    assert c["command"][c["command"].index("--engines") + 1] == "current"


def test_same_verdicts_under_both_engine_settings(tmp_path):
    base, cur = tmp_path / "base", tmp_path / "cur"
    assert main(["verify", "--claims", "C02,C14", "--engines", "baseline", "--jobs", "1", "--out", str(base)]) == 0
    assert main(["verify", "--claims", "C02,C14", "--engines", "current", "--jobs", "1", "--out", str(cur)]) == 0
    verdicts = [[(x["id"], x["verdict"], x["negative_control"]["verdict"]) for x in _read(o)["claims"]]
                for o in (base, cur)]
    assert verdicts[0] == verdicts[1]


def test_bad_engines_exit_2_with_one_line(tmp_path, capsys):
    assert main(["verify", "--claims", "C02", "--engines", "fastest", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "engines='fastest'" in err[0] and "current, baseline" in err[0]
    assert not (tmp_path / "r").exists()
    with pytest.raises(Exception, match="expected an Engines record"):
        Context(engines="baseline")
    with pytest.raises(Exception, match="high_precision='gbs'"):
        Engines(high_precision="gbs")


def test_high_precision_backend_follows_the_settings():
    from numerics import taylor_available

    assert high_precision_backend(ENGINE_SETTINGS["baseline"]) == "mpmath"
    expected = "taylor" if taylor_available() else "mpmath"
    assert high_precision_backend(ENGINE_SETTINGS["current"]) == expected == high_precision_backend()


def test_atlas_claim_builds_with_the_settings_box_engine(monkeypatch):
    from softpolar.atlas import engine, claims

    seen = []
    monkeypatch.setattr(engine, "run_atlas", lambda name, out, **kw: seen.append((name, kw["engine"])) or {})
    for name in ("baseline", "current"):
        claims.build_atlases(Context(engines=ENGINE_SETTINGS[name]))
    assert seen == [("conflict3", engine.BASELINE_ENGINE), ("uniform3", engine.BASELINE_ENGINE),
                    ("conflict3", None), ("uniform3", None)]
    assert engine.BASELINE_ENGINE["scheme"] != engine.DEFAULT_ENGINE["scheme"]  # the baseline is another scheme
