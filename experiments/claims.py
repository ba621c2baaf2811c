r"""Claims 31-33 (digest section 8, "transformer-level"), checkable by ``softpolar verify``.

Interface for the claim registry (``proofs_check``):

* :data:`CLAIMS` -- ``{"31": ClaimSpec, "32": ..., "33": ...}`` with id, title, LaTeX
  statement, provenance, assumptions, kind of evidence and the negative control;
* :func:`expected_verdict` ``(claim_id, profile) -> str``;
* :func:`check_claim` ``(claim_id, *, profile="quick"|"full", out_dir=None, device="cpu",
  seed=0, scheduler="local", progress=False) -> dict`` with keys ``id``, ``title``,
  ``statement``, ``provenance``, ``verdict`` (``verified`` / ``refuted`` /
  ``inconclusive``), ``expected``, ``reason``, ``evidence`` (one line),
  ``negative_control`` (``{"description", "verdict", "failed_as_required"}``),
  ``details`` (numbers), ``figures`` (paths, when ``out_dir`` is given), ``seconds``.

Profiles: ``quick`` runs nothing (the training grids take minutes) and returns
``inconclusive`` with the reason, *unless* ``out_dir`` already holds the finished smoke
grid (then its results are used). ``full`` runs (or resumes) the smoke grids in
``out_dir`` (a temporary folder when ``None``) and SmolLM2 at smoke size.

Verdict rules (thresholds are ours [D]; the paper's numbers are missing [M]):

* 31 -- *verified* if softmax passes the accuracy filter and has >= 50% sink heads in
  layer 1 while every unnormalized sigmoid / linear variant that passes has <= 25%;
  *refuted* if softmax passes with < 50% or such a variant passes with > 50%;
  *inconclusive* otherwise. Control: the same rule on key 5 instead of BOS must not
  find sinks.
* 32 -- *verified* if the 1-layer 1-head softmax model (accuracy > 0.95) has a flip rate
  >= 0.5 and the mean flip rate of the softmax models with more heads or layers is lower
  by >= 0.2; *refuted* if either fails on trained models. Control: the least-attended
  token instead of the top-1 must flip < 0.1.
* 33 -- always *inconclusive* offline: the paper compares two 7B models (softmax vs
  unnormalized sigmoid) whose checkpoints are on GCS. Only the softmax side is measured,
  on SmolLM2-135M, after its forward-pass sanity checks; the details say whether that side
  matches (Gu sink rate > 0.3 and median max-share > 0.3). Control: the untrained
  same-architecture model must not match.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from theorems import check_choice

PROFILES = ("quick", "full")
#: thresholds of the verdict rules (ours [D], see the module docstring).
HIGH_SINK_PCT, LOW_SINK_PCT = 50.0, 25.0
HIGH_FLIP, FLIP_DROP, LOW_FLIP_CONTROL = 0.5, 0.2, 0.1
SINK_RATE_MIN, MAX_SHARE_MIN = 0.3, 0.3


@dataclass(frozen=True)
class ClaimSpec:
    """Registry entry of one transformer-level claim."""

    id: str
    title: str
    statement: str
    provenance: str
    assumptions: str
    kind: str
    negative_control: str


CLAIMS = {
    "31": ClaimSpec(
        "31", "Induction: softmax heads become attention sinks, unnormalized ones do not",
        r"share of layer-1 heads with $\frac{\sum_{q}A_{q,\mathrm{BOS}}}{\sum_{q,k}A_{q,k}}>0.9$ "
        r"(runs with accuracy $>0.95$) is high for softmax and $\approx0$ for unnormalized "
        r"sigmoid / linear attention",
        "C/I", "2-layer pre-LN transformer, induction task of digest 6.2 at smoke-grid sizes",
        "reproduction of the authors' settings (reduced sizes)",
        "the same rule on key position 5 instead of BOS finds no sinks"),
    "32": ClaimSpec(
        "32", "Classification: one token decides the class in 1-layer 1-head softmax models",
        r"single-token flip rate of the 1-layer 1-head softmax model is high, and lower with "
        r"more heads or layers",
        "C/I (weakening: A)", "classification task of digest 6.3, vocab 41, MLP and LN on",
        "reproduction of the authors' settings (reduced sizes)",
        "the least-attended token instead of the top-1 token rarely flips the label"),
    "33": ClaimSpec(
        "33", "Pretrained LLMs: softmax heads are sparser than unnormalized-sigmoid heads",
        r"histogram of per-head $\frac{\max_j p_{ij}}{\sum_j p_{ij}}$ is shifted higher for "
        r"softmax than for unnormalized sigmoid (7B models)",
        "C/I", "offline: SmolLM2-135M (softmax) only; no sigmoid-attention model available",
        "measurement on a real pretrained model (softmax side only)",
        "an untrained model of the same architecture shows no first-token sinks"),
}


def expected_verdict(claim_id: str, profile: str) -> str:
    """The verdict ``check_claim`` should return on a healthy install."""
    check_choice("claim_id", str(claim_id), CLAIMS)
    check_choice("profile", profile, PROFILES)
    if profile == "quick" or str(claim_id) == "33":
        return "inconclusive"
    return "verified"


def _result(spec: ClaimSpec, profile, verdict, reason, evidence, control, details, figures, t0):
    return {**asdict(spec), "verdict": verdict, "expected": expected_verdict(spec.id, profile),
            "reason": reason, "evidence": evidence, "negative_control": control,
            "details": details, "figures": figures, "seconds": time.perf_counter() - t0}


def check_claim(claim_id, *, profile: str = "quick", out_dir=None, device: str = "cpu",
                seed: int = 0, scheduler: str = "local", progress: bool = False) -> dict:
    """Check claim ``31``, ``32`` or ``33``; see the module docstring for the return value."""
    claim_id = str(claim_id)
    check_choice("claim_id", claim_id, CLAIMS)
    check_choice("profile", profile, PROFILES)
    t0 = time.perf_counter()
    spec = CLAIMS[claim_id]
    if claim_id == "33":
        if profile == "quick":
            return _result(spec, profile, "inconclusive", "not run in the quick profile (SmolLM2 "
                           "forward passes take about a minute); needs --profile full",
                           "skipped", {"description": spec.negative_control, "verdict": "skipped",
                                       "failed_as_required": None}, {}, [], t0)
        return _check_33(spec, profile, out_dir, device, seed, t0)
    task = "induction" if claim_id == "31" else "classification"
    with tempfile.TemporaryDirectory(prefix="softpolar-claim-") as tmp:
        folder = Path(out_dir) / f"{task}-smoke" if out_dir is not None else Path(tmp) / task
        results = _smoke_results(task, folder, profile, scheduler, device, progress)
        if results is None:
            return _result(spec, profile, "inconclusive",
                           "not run in the quick profile (the smoke training grid takes minutes); "
                           "needs --profile full or a finished 'softpolar experiment "
                           f"{task} --grid smoke --out DIR/{task}-smoke'", "skipped",
                           {"description": spec.negative_control, "verdict": "skipped",
                            "failed_as_required": None}, {}, [], t0)
        check = _check_31 if claim_id == "31" else _check_32
        verdict, reason, evidence, control, details = check(results)
        figures = _figures(task, results, folder) if out_dir is not None else []
    return _result(spec, profile, verdict, reason, evidence, control, details, figures, t0)


def _smoke_results(task, folder, profile, scheduler, device, progress):
    from ._grid import grid_configs, load_result, run_grid

    configs = grid_configs(task, "smoke")
    if profile == "quick":
        found = [load_result(folder, c) for c in configs]
        return found if all(r is not None for r in found) else None
    return run_grid(configs, folder, name=f"claim-{task}", scheduler=scheduler, device=device,
                    progress=progress)


def _figures(task, results, folder):
    from . import _figures, _summary

    if task == "induction":
        return [_figures.sink_bars(_summary.induction_table(results), folder / "sink_heads.png"),
                _figures.attention_maps(results, folder / "attention_maps.png")]
    return [_figures.flip_bars(_summary.classification_table(results), folder / "flip_rates.png")]


def _check_31(results):
    from ._metrics import sink_head_fraction
    from ._summary import induction_table

    rows = {r["attention"]: r for r in induction_table(results)}
    soft = rows.get("softmax")
    unnorm = [rows[k] for k in ("sigmoid-unnorm", "linear-unnorm") if k in rows]
    passed_unnorm = [r for r in unnorm if r["sink_pct"] is not None]
    details = {"table": list(rows.values()), "high_pct": HIGH_SINK_PCT, "low_pct": LOW_SINK_PCT}
    frac5, _, _ = sink_head_fraction([r for r in results if r and r.get("status") == "ok"
                                      and r["config"]["attention"] == "softmax"], key="share_key5")
    control_pct = None if frac5 is None else 100.0 * frac5
    control = {"description": CLAIMS["31"].negative_control,
               "verdict": "no sinks" if (control_pct is not None and control_pct < HIGH_SINK_PCT)
               else "sinks found" if control_pct is not None else "not applicable",
               "failed_as_required": None if control_pct is None else control_pct < HIGH_SINK_PCT,
               "softmax_sink_pct_key5": control_pct}
    summary = ", ".join(f"{r['attention']} {_pct(r['sink_pct'])} ({r['passed']}/{r['runs']} passed)"
                        for r in [soft, *unnorm] if r is not None)
    if soft is None or soft["sink_pct"] is None:
        return "inconclusive", "no softmax run reached 95% induction accuracy", summary, control, details
    if soft["sink_pct"] < HIGH_SINK_PCT:
        return "refuted", f"softmax has only {soft['sink_pct']:.0f}% sink heads", summary, control, details
    high = [r for r in passed_unnorm if r["sink_pct"] > HIGH_SINK_PCT]
    if high:
        return ("refuted", f"{high[0]['attention']} has {high[0]['sink_pct']:.0f}% sink heads",
                summary, control, details)
    if not passed_unnorm or any(r["sink_pct"] > LOW_SINK_PCT for r in passed_unnorm):
        return ("inconclusive", "no unnormalized sigmoid/linear run passed the accuracy filter, or "
                "one sits between the thresholds", summary, control, details)
    return "verified", "softmax high, unnormalized sigmoid/linear near 0", summary, control, details


def _pct(x):
    return "x" if x is None else f"{x:.0f}%"


def _check_32(results):
    import numpy as np

    from ._summary import classification_table

    rows = classification_table(results)
    soft = [r for r in rows if r["attention"] == "softmax"]
    one = next((r for r in soft if r["layers"] == 1 and r["heads"] == 1), None)
    more = [r for r in soft if (r["layers"], r["heads"]) != (1, 1) and r["flip_rate"] is not None]
    details = {"table": rows}
    if one is None or one["flip_rate"] is None or one["accuracy"] <= 0.95:
        control = {"description": CLAIMS["32"].negative_control, "verdict": "not applicable",
                   "failed_as_required": None}
        return "inconclusive", "the 1-layer 1-head softmax model did not train", "", control, details
    ctrl = one["flip_rate_control"]
    control = {"description": CLAIMS["32"].negative_control,
               "verdict": f"flip rate {ctrl:.3f}", "failed_as_required": ctrl < LOW_FLIP_CONTROL}
    more_mean = float(np.mean([r["flip_rate"] for r in more])) if more else None
    evidence = (f"softmax 1L1H flip {one['flip_rate']:.3f} (control {ctrl:.3f}); more heads/layers "
                + ", ".join(f"{r['layers']}L{r['heads']}H {r['flip_rate']:.3f}" for r in more))
    details.update({"flip_1l1h": one["flip_rate"], "flip_more_mean": more_mean})
    if one["flip_rate"] < HIGH_FLIP:
        return "refuted", f"1L1H flip rate {one['flip_rate']:.3f} < {HIGH_FLIP}", evidence, control, details
    if more_mean is None:
        return "inconclusive", "no softmax model with more heads/layers", evidence, control, details
    if one["flip_rate"] - more_mean < FLIP_DROP:
        return ("refuted", f"more heads/layers do not lower the flip rate by {FLIP_DROP}",
                evidence, control, details)
    return "verified", "high for 1L1H, lower with more heads/layers", evidence, control, details


def _check_33(spec, profile, out_dir, device, seed, t0):
    from ._pretrained import PretrainedUnavailable, pretrained_sinks

    try:
        res = pretrained_sinks(device=device, grid="smoke", seed=seed)
    except PretrainedUnavailable as exc:
        return _result(spec, profile, "inconclusive", f"SmolLM2 unavailable: {exc}", "skipped",
                       {"description": spec.negative_control, "verdict": "skipped",
                        "failed_as_required": None}, {}, [], t0)
    s = res["sanity"]
    sane = (s["induction"]["accuracy_second_repeat"] > 100 * s["induction"]["chance"]
            and s["text"]["cross_entropy"] < s["text_wrong_rope"]["cross_entropy"]
            and s["text"]["cross_entropy"] < 0.6 * s["text"]["uniform_cross_entropy"])

    def matches(m):
        return m["gu_sink_rate"] > SINK_RATE_MIN and m["max_share_median"] > MAX_SHARE_MIN

    soft_ok = sane and matches(res["random"]) and matches(res["text"])
    ctrl_match = matches(res["control"])
    control = {"description": spec.negative_control,
               "verdict": f"Gu sink rate {res['control']['gu_sink_rate']:.3f}, median max-share "
                          f"{res['control']['max_share_median']:.3f}",
               "failed_as_required": not ctrl_match}
    evidence = (f"SmolLM2-135M softmax side: sanity {'ok' if sane else 'FAILED'} (induction "
                f"{s['induction']['accuracy_second_repeat']:.2f}, text CE "
                f"{s['text']['cross_entropy']:.2f}); Gu sink rate {res['random']['gu_sink_rate']:.2f} "
                f"(random) / {res['text']['gu_sink_rate']:.2f} (text); median max-share "
                f"{res['random']['max_share_median']:.2f} / {res['text']['max_share_median']:.2f}; "
                f"first-token massive ratio {res['text']['massive_first_max']:.0f}")
    reason = ("the comparison needs the unnormalized-sigmoid 7B checkpoint (GCS), unreachable "
              "offline; softmax side " + ("consistent with the claim" if soft_ok
                                          else "NOT consistent with the claim"))
    figures = []
    if out_dir is not None:
        from ._figures import max_share_histogram

        figures.append(max_share_histogram(res, Path(out_dir) / "pretrained-smoke" / "max_share_hist.png"))
    details = {"softmax_side_consistent": soft_ok, "sanity_ok": sane,
               "sanity": s, "random": _scalars(res["random"]), "text": _scalars(res["text"]),
               "control": _scalars(res["control"])}
    return _result(spec, profile, "inconclusive", reason, evidence, control, details, figures, t0)


def _scalars(m: dict) -> dict:
    return {k: v for k, v in m.items() if not isinstance(v, list)}
