r"""Row 14: the box engine, CPU seconds per certified area, today's engine vs the baseline it replaced.

One conflict3 atlas at ``--min-width W``, built two or four times in this process with ``scheduler="inline"``
(every box in this process, so ``time.process_time`` is the whole CPU cost): with
``engine={"scheme": "baseline"}`` (the engine before the contracting a-priori guess and the
recurrence Jacobian, :data:`numerics.validated.box.SCHEMES`), with the default engine, with
the other recent scheme (``fast`` or ``adaptive``, whichever is not the default; a fact line) and with
the ``parent`` scheme (parent-box reuse, when it is not the default; a fact line), in alternation (same
background load). Quick mode builds the baseline and today's atlas only (the two fact lines' schemes cost
about 33 s of an idle run's 118 s, issue 40); full mode builds all four. The ratio is baseline CPU per certified
area over today's; the certified fractions are reported beside it (the target is "at least 2x less CPU for the same or a
larger certified fraction"). ``check=True`` (full mode) re-proves every certified box of each atlas
with the independent checker and reports the verdicts (the checker's own time is not in the ratio).
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from numerics import check_atlas
from softpolar.atlas import ADAPTIVE_ENGINE, BASELINE_ENGINE, DEFAULT_ENGINE, FAST_ENGINE, PARENT_ENGINE, run_atlas

from ._timing import loadavg

TITLE = "box engine: conflict3 atlas CPU per certified area, today's engine vs the baseline (inline)"
WIDTH = {"smoke": "1/4", "quick": "1/32", "full": "1/64"}
REPS = {"smoke": 1, "quick": 1, "full": 1}
CHECK = {"smoke": False, "quick": False, "full": True}
#: whether the two fact lines' schemes (the other recent scheme, parent-box reuse) are built too (smoke: yes, at
#: 1/4 they cost little and the tests read their lines)
OTHER_SCHEMES = {"smoke": True, "quick": False, "full": True}
TARGET = 2.0


def _atlas(engine: dict, width: str, tmp: Path, tag: str) -> tuple[float, dict]:
    out = tmp / f"atlas-{tag}-{time.monotonic_ns()}"
    t0 = time.process_time()
    cert = run_atlas("conflict3", out, min_width=width, scheduler="inline", engine=engine, map_size=64,
                     draw=False, progress=False)
    return time.process_time() - t0, cert


def run(mode: str, log) -> dict:
    """Run row 14; see the module docstring."""
    width = WIDTH[mode]
    engines = {"baseline": BASELINE_ENGINE, "today": DEFAULT_ENGINE}
    # the other of the two recent schemes (fast / adaptive), so the step between them is measured too
    other = FAST_ENGINE if DEFAULT_ENGINE != FAST_ENGINE else ADAPTIVE_ENGINE
    if OTHER_SCHEMES[mode]:
        engines[other["scheme"]] = other
        if DEFAULT_ENGINE != PARENT_ENGINE:  # parent-box reuse, measured beside today's
            engines["parent"] = PARENT_ENGINE
    cpu, certs = {k: [] for k in engines}, {}
    load0 = loadavg()
    with tempfile.TemporaryDirectory(prefix="softpolar-bench-box-") as tmp:
        for rep in range(REPS[mode]):
            for name, engine in engines.items():
                log(f"row 14: atlas conflict3 --min-width {width}, {name} engine (rep {rep + 1})")
                s, cert = _atlas(engine, width, Path(tmp), name)
                cpu[name].append(s)
                certs[name] = cert
    med = {k: sorted(v)[len(v) // 2] for k, v in cpu.items()}
    frac = {k: c["fraction_certified"] for k, c in certs.items()}
    per_area = {k: med[k] / max(frac[k] * 4, 1e-12) for k in engines}  # the slice has area 4
    r = per_area["baseline"] / per_area["today"]
    met = r >= TARGET and frac["today"] >= frac["baseline"]
    boxes = {k: sum(b["status"] == "certified" for b in c["boxes"]) for k, c in certs.items()}
    facts = [{"label": f"conflict3 at {width}: certified fraction, baseline / today",
              "value": f"{100 * frac['baseline']:.2f}% / {100 * frac['today']:.2f}%", "unit": "",
              "notes": f"certified boxes {boxes['baseline']} / {boxes['today']}"},
             {"label": f"conflict3 at {width}: CPU s, baseline / today", "value": f"{med['baseline']:.1f} / "
              f"{med['today']:.1f} s", "unit": "", "notes": "time.process_time of the whole inline atlas run"}]
    o = other["scheme"]
    if o in engines:
        facts.append({"label": f"conflict3 at {width}: the {o} scheme, CPU s / certified area % / CPU per "
                      "certified area over today's", "value": f"{med[o]:.1f} s / {100 * frac[o]:.2f}% / "
                      f"{per_area[o] / per_area['today']:.2f}", "unit": "",
                      "notes": f"today's scheme is {DEFAULT_ENGINE['scheme']!r}; certified boxes {boxes[o]}"})
    else:
        facts.append({"label": f"conflict3 at {width}: the {o} and parent schemes",
                      "value": f"not built in {mode} mode", "unit": "",
                      "notes": "their fact lines cost about 33 s of an idle quick run; run without --quick"})
    if "parent" in engines:
        facts.append({"label": f"conflict3 at {width}: parent-box reuse (scheme 'parent'), CPU s / certified area "
                      "% / CPU per certified area over today's", "value": f"{med['parent']:.1f} s / "
                      f"{100 * frac['parent']:.2f}% / {per_area['parent'] / per_area['today']:.2f}", "unit": "",
                      "notes": f"certified boxes {boxes['parent']} (today's {boxes['today']})"})
    if CHECK[mode]:
        for name, cert in certs.items():
            res = check_atlas(cert)
            facts.append({"label": f"atlas --check of the {name} atlas", "value": "passed" if res.passed else
                          "REFUSED", "unit": "", "notes": f"{res.verified}/{res.certified} boxes re-proven"})
    return {"lines": [{
        "case": f"atlas conflict3 --min-width {width} (inline)", "softpolar": "today's engine",
        "anchor": "baseline engine", "softpolar_s": per_area["today"], "anchor_s": per_area["baseline"],
        "ratio_label": "CPU per certified area: baseline/today", "ratio": r,
        "target": f">= {TARGET:g} with the same or a larger certified fraction", "met": met,
        "notes": f"{REPS[mode]} rep(s) each, alternated; certified {100 * frac['baseline']:.2f}% -> "
                 f"{100 * frac['today']:.2f}%; load {load0} -> {loadavg()} on {os.cpu_count()} CPUs"}],
        "facts": facts}
