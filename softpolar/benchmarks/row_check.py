r"""Row 16: ``atlas --check``, the independent checker's CPU on one atlas, today's method vs the checker before.

One conflict3 atlas at ``--min-width W`` is built once with the default engine, ``scheduler="inline"``
(its ``time.process_time`` is the engine's CPU), then re-verified in this process by
:func:`numerics.validated.atlas_check.check_atlas` with ``method="recurrence"`` (today: the variational
Jacobian by a linear recurrence, failed parts cut in halves) and ``method="jets"`` (the checker before it:
forward-mode jets, parts cut in quarters), in alternation (same background load), ``time.process_time``
each. The ratio is the jets checker's CPU over today's; both must pass the honest atlas (a refusal fails
the row). Facts: each checker's CPU over the engine's on the same atlas.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from numerics import check_atlas
from softpolar.atlas import run_atlas

from ._timing import loadavg

TITLE = "atlas --check: independent checker CPU on one conflict3 atlas, today's method vs the jets checker (inline)"
#: quick at 1/16 (issue 40, the quick budget): 32 CPU s for the row against about 105 at 1/32, the same ratio
#: (jets / recurrence 9.17 at 1/16, 9.12 at 1/32, CPU time, measured at load 2.8-3.5 and 3-11)
WIDTH = {"smoke": "1/4", "quick": "1/16", "full": "1/64"}
REPS = {"smoke": 1, "quick": 1, "full": 2}
TARGET = 2.0


def run(mode: str, log) -> dict:
    """Run row 16; see the module docstring."""
    width = WIDTH[mode]
    load0 = loadavg()
    with tempfile.TemporaryDirectory(prefix="softpolar-bench-check-") as tmp:
        log(f"row 16: atlas conflict3 --min-width {width} (default engine, inline)")
        t0 = time.process_time()
        cert = run_atlas("conflict3", Path(tmp) / "a", min_width=width, scheduler="inline", map_size=64,
                         draw=False, progress=False)
        engine_s = time.process_time() - t0
    cpu, verdicts = {"recurrence": [], "jets": []}, {}
    for rep in range(REPS[mode]):
        for method in cpu:
            log(f"row 16: atlas --check, {method} checker (rep {rep + 1})")
            t0 = time.process_time()
            res = check_atlas(cert, method=method)
            cpu[method].append(time.process_time() - t0)
            verdicts[method] = res
    med = {k: sorted(v)[len(v) // 2] for k, v in cpu.items()}
    passed = all(r.passed for r in verdicts.values())
    r = med["jets"] / med["recurrence"]
    facts = [{"label": f"conflict3 at {width}: atlas --check CPU over the engine's, {k} checker",
              "value": f"{med[k] / engine_s:.2f}", "unit": "x",
              "notes": f"check {med[k]:.1f} s, engine {engine_s:.1f} s (inline run_atlas, map 64x64); "
                       f"{'passed' if verdicts[k].passed else 'REFUSED'} "
                       f"{verdicts[k].verified}/{verdicts[k].certified} boxes re-proven"}
             for k in cpu]
    return {"lines": [{
        "case": f"atlas --check of conflict3 --min-width {width} (inline)", "softpolar": "recurrence checker",
        "anchor": "jets checker", "softpolar_s": med["recurrence"], "anchor_s": med["jets"],
        "ratio_label": "CPU: jets/recurrence", "ratio": r,
        "target": f">= {TARGET:g}, both checkers pass the honest atlas", "met": r >= TARGET and passed,
        "notes": f"{REPS[mode]} rep(s) each, alternated; engine {engine_s:.1f} s CPU; load {load0} -> "
                 f"{loadavg()} on {os.cpu_count()} CPUs"}],
        "facts": facts}
