r"""Tables from grid results: sink heads per attention type, flip rates per shape.

Induction table (one row per attention type), over the runs of that type:

* ``runs`` / ``passed``: runs, and runs with induction accuracy $>0.95$ [C];
* ``sink_pct``: % of layer-1 heads with BOS share $>0.9$ averaged over passed runs [C]
  (share computed on $|A|$, identical to the authors' for non-negative kernels, see
  :mod:`softpolar.experiments._metrics`); ``sink_pct_signed`` with the authors' signed formula;
* ``bos_share``: mean layer-1 BOS share of passed runs (all runs when none passed);
* ``gu_sink_rate``: mean Gu et al. $\varepsilon=0.3$ first-token sink rate (all layers);
* ``bos_mass`` / ``mass_key5``: mean layer-1 attention mass on BOS / on key 5, not divided
  by the row mass (head mean, passed runs; ``None`` when a result predates the field);
  ``row_mass``: the mean layer-1 row mass (1 except for ``softmax1``);
* ``massive``: mean over runs of the largest first-token massive-activation ratio over the
  residual streams; ``gate``: mean layer-1 gate of a gated kernel.

Classification table (one row per attention type and (layers, heads)): accuracy,
CLS max-share (clipped to [0, 1]) averaged over heads and layers, flip rate averaged over
heads and layers, and the negative-control flip rate (least-attended token).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ._attention import ATTENTION_KINDS
from ._metrics import MIN_INDUCTION_ACCURACY, sink_head_fraction


def _ok(results):
    return [r for r in results if r is not None and r.get("status", "ok") in ("ok", "diverged")]


def _cpu(runs):
    """Summed CPU seconds of the trained runs, or ``None`` if a result predates the field."""
    vals = [r.get("cpu_seconds") for r in runs if r.get("status", "ok") == "ok"]
    return None if not vals or any(v is None for v in vals) else float(np.sum(vals))


def _fmt(x, spec=".3f"):
    return "--" if x is None else format(x, spec)


def _layer1(runs, key):
    """Mean over ``runs`` of the head-mean of ``r[key]`` at layer index 1; ``None`` if a run lacks it."""
    vals = []
    for r in runs:
        layers = r.get(key)
        if layers is None:
            return None
        vals.append(float(np.mean(layers[1 if len(layers) > 1 else -1])))
    return float(np.mean(vals)) if vals else None


def induction_table(results) -> list[dict]:
    """Rows of the induction summary, in :data:`ATTENTION_KINDS` order."""
    groups = defaultdict(list)
    for r in _ok(results):
        groups[r["config"]["attention"]].append(r)
    rows = []
    for kind in ATTENTION_KINDS:
        runs = groups.get(kind)
        if not runs:
            continue
        trained = [r for r in runs if r.get("status") == "ok"]
        frac, used, total = sink_head_fraction(trained) if trained else (None, 0, len(runs))
        frac_s, _, _ = sink_head_fraction(trained, key="bos_share_signed") if trained else (None, 0, 0)
        passed = [r for r in trained if r["accuracy"] > MIN_INDUCTION_ACCURACY] or trained
        layer1 = [r["bos_share"][1 if len(r["bos_share"]) > 1 else -1] for r in passed]
        rows.append({
            "attention": kind, "label": ATTENTION_KINDS[kind].label,
            "normalized": ATTENTION_KINDS[kind].normalized,
            "runs": len(runs), "passed": used,
            "accuracy": float(np.mean([r["accuracy"] for r in runs])),
            "sink_pct": None if frac is None else 100.0 * frac,
            "sink_pct_signed": None if frac_s is None else 100.0 * frac_s,
            "bos_share": float(np.mean(layer1)) if layer1 else None,
            "gu_sink_rate": (float(np.mean([r["gu_sink_rate"] for r in trained]))
                             if trained else None),
            "bos_mass": _layer1(passed, "bos_mass"), "mass_key5": _layer1(passed, "mass_key5"),
            "row_mass": _layer1(passed, "row_mass"),
            "gate": _layer1(passed, "gate_mean") if all(r.get("gate_mean") for r in passed) else None,
            "massive": (float(np.mean([max(r["massive_ratio_first"]) for r in passed]))
                        if passed and all("massive_ratio_first" in r for r in passed) else None),
            "seconds": float(np.sum([r.get("seconds", 0.0) for r in runs])),
            "cpu_seconds": _cpu(runs),
        })
    return rows


def classification_table(results) -> list[dict]:
    """Rows of the classification summary: attention type x (layers, heads)."""
    groups = defaultdict(list)
    for r in _ok(results):
        c = r["config"]
        groups[(c["attention"], c["n_layers"], c["n_heads"])].append(r)
    order = {k: i for i, k in enumerate(ATTENTION_KINDS)}
    rows = []
    for (kind, L, H), runs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2],
                                                                       order[kv[0][0]])):
        trained = [r for r in runs if r.get("status") == "ok"]
        mean = lambda key, trained=trained: (float(np.mean([np.mean(r[key]) for r in trained]))
                                             if trained else None)
        rows.append({"attention": kind, "label": ATTENTION_KINDS[kind].label, "layers": L,
                     "heads": H, "runs": len(runs),
                     "accuracy": float(np.mean([r["accuracy"] for r in runs])),
                     "max_share": mean("max_share_cls"), "entropy": mean("entropy_cls"),
                     "flip_rate": mean("flip_rate"), "flip_rate_control": mean("flip_rate_control"),
                     "seconds": float(np.sum([r.get("seconds", 0.0) for r in runs])),
                     "cpu_seconds": _cpu(runs)})
    return rows


def markdown_table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """Render ``rows`` as a markdown table; ``columns`` = (key, header, format spec)."""
    head = "| " + " | ".join(h for _, h, _ in columns) + " |"
    sep = "|" + "|".join("---" for _ in columns) + "|"
    body = []
    for r in rows:
        cells = []
        for key, _, spec in columns:
            v = r.get(key)
            cells.append(_fmt(v, spec) if isinstance(v, (float, int)) and not isinstance(v, bool)
                         else ("--" if v is None else str(v)))
        body.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, sep, *body])


INDUCTION_COLUMNS = [("label", "attention", ""), ("runs", "runs", "d"), ("passed", "acc>0.95", "d"),
                     ("accuracy", "mean acc", ".3f"), ("sink_pct", "% sink heads (L1)", ".0f"),
                     ("sink_pct_signed", "% sink (signed)", ".0f"),
                     ("bos_share", "BOS share (L1)", ".3f"), ("bos_mass", "BOS mass (L1)", ".3f"),
                     ("gu_sink_rate", "Gu sink rate", ".2f"), ("massive", "massive ratio", ".1f"),
                     ("seconds", "wall s", ".0f"), ("cpu_seconds", "cpu s", ".0f")]
CLASSIFICATION_COLUMNS = [("label", "attention", ""), ("layers", "L", "d"), ("heads", "H", "d"),
                          ("runs", "runs", "d"), ("accuracy", "acc", ".3f"),
                          ("max_share", "CLS max-share", ".3f"), ("entropy", "CLS entropy", ".3f"),
                          ("flip_rate", "flip rate", ".3f"),
                          ("flip_rate_control", "flip (control)", ".3f"), ("seconds", "wall s", ".0f"),
                          ("cpu_seconds", "cpu s", ".0f")]
