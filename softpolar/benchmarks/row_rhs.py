r"""Row 1: one evaluation of the flow's right-hand side (logistic loss, softmax link).

Contenders, all float64 on the CPU, on the same random $(V, a, w)$ with $n=d$:

* **softpolar**: ``numerics.flow_rhs('logistic', 'softmax')`` (numpy kernels lambdified from
  :mod:`theorems`, structured form);
* **hand-written numpy** (the anchor a researcher would write, typed here on purpose: it is
  the *competitor*, not a derivation):
  $s=\operatorname{softmax}(a)$, $\beta=Vs$, $g=\ell'(\langle w,\beta\rangle)\,w$,
  $\dot V=-g s^\top$, $f=-V^\top g$, $\dot a=s\odot(f-\langle s,f\rangle)$,
  with $\ell'(z)=-\sigma(-z)$;
* **torch autograd**: $-\nabla_{V,a}\,\log(1+e^{-\langle w, V\operatorname{softmax}(a)\rangle})$
  by ``torch.autograd.grad`` on tensors already on the device (its best case: no numpy
  conversion is billed).

The three results are compared (relative 1e-12, the codegen tests' tolerance) before any
timing, so a fast wrong contender cannot enter the table.

Targets (set when the generated code replaced hand-written kernels): generated / hand-written
$\le 1.5$ and autograd / generated $\ge 2$ at $n=d=256$. A line's ratio is the median of each interleaved
round's own ratio (the two contenders of a round ran back to back, under the same load), ``ratios`` holds them
all and the line shows their range (issue 40: autograd / generated, close to its threshold, measured 1.97 in an
idle run as a ratio of medians).
"""
from __future__ import annotations

import cProfile
import io
import pstats

import numpy as np
import scipy.special
from numerics import flow_rhs

from ._timing import interleaved, median, ratio

TITLE = "RHS evaluation (logistic loss, softmax link), float64 CPU"
SIZES = {"smoke": (8,), "quick": (8, 64, 256, 1024), "full": (8, 64, 256, 1024)}
REPS = {"smoke": 2, "quick": 9, "full": 11}
#: ``--repeat K`` sets the number of interleaved rounds (its targets sit close to their thresholds)
REPEATABLE = True
TARGET_N = 256
#: agreement required between the contenders before timing (relative, max-norm).
AGREE_RTOL = 1e-12


def handwritten_rhs(V, a, w):
    """The anchor: a vectorized numpy RHS typed by hand (see module docstring)."""
    e = np.exp(a - a.max())
    s = e / e.sum()
    beta = V @ s
    g = -scipy.special.expit(-(w @ beta)) * w
    dV = -np.outer(g, s)
    f = -(g @ V)
    da = s * (f - s @ f)
    return dV, da


def make_autograd(torch, V, a, w):
    """torch autograd of the loss; returns a zero-argument callable giving ``(dV, da)``."""
    Vt = torch.tensor(V, dtype=torch.float64)
    at = torch.tensor(a, dtype=torch.float64)
    wt = torch.tensor(w, dtype=torch.float64)

    def call():
        Vl = Vt.detach().requires_grad_(True)
        al = at.detach().requires_grad_(True)
        loss = torch.nn.functional.softplus(-(wt @ (Vl @ torch.softmax(al, dim=0))))
        gV, ga = torch.autograd.grad(loss, (Vl, al))
        return -gV, -ga

    return call


def _rel(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return float(np.max(np.abs(x - y)) / max(np.max(np.abs(y)), 1e-300))


def profile_generated(rhs, V, a, w, calls: int = 2000, top: int = 12) -> str:
    """cProfile of ``calls`` generated-RHS evaluations: the ``top`` lines by total time."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        rhs(V, a, w)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def stage_breakdown(rhs, V, a, w, reps: int = 5) -> str:
    r"""Median time of each stage of the generated RHS, rebuilt from its public methods.

    cProfile bills the numpy operators inside ``FlowRHS.__call__`` to ``__call__`` itself;
    this splits them: $\varphi(a)$, $\beta=V\varphi$, $g=\nabla\mathcal L$, the outer
    product $-g\varphi^\top$ (as ``__call__`` writes it, and with ``np.einsum``), $f=-V^\top g$,
    $J^\top f$.
    """
    phi = rhs.phi(a)
    beta = V @ phi
    g = rhs.grad_loss(beta, w)
    f = -(g @ V)
    stages = {
        "phi(a)": lambda: rhs.phi(a),
        "beta = V phi": lambda: V @ phi,
        "g = grad L(beta)": lambda: rhs.grad_loss(beta, w),
        "dV = -g[:, None] * phi[None, :]": lambda: -g[..., :, None] * phi[..., None, :],
        "dV by np.einsum('...i,...j->...ij')": lambda: np.einsum("...i,...j->...ij", -g, phi),
        "f = -V^T g": lambda: -(g @ V),
        "da = J^T f": lambda: rhs.jvp_T(a, f),
        "whole call": lambda: rhs(V, a, w),
    }
    res = interleaved(stages, reps=reps)
    return "\n".join(f"{name:40s} {res[name]['median_s'] * 1e6:9.1f} us" for name in stages)


def run(mode: str, log, repeat: int | None = None) -> dict:
    """Run row 1; see the module docstring. ``repeat``: interleaved rounds (default :data:`REPS`)."""
    import torch

    rhs = flow_rhs("logistic", "softmax")
    reps = repeat or REPS[mode]
    lines = []
    profile = None
    for n in SIZES[mode]:
        rng = np.random.default_rng(1000 + n)
        V = 0.1 * rng.standard_normal((n, n))
        a = 0.1 * rng.standard_normal(n)
        w = rng.standard_normal(n)
        w /= np.linalg.norm(w)
        auto = make_autograd(torch, V, a, w)
        ref = handwritten_rhs(V, a, w)
        gen = rhs(V, a, w)
        ag = [x.numpy() for x in auto()]
        err = max(_rel(gen[0], ref[0]), _rel(gen[1], ref[1]), _rel(ag[0], ref[0]), _rel(ag[1], ref[1]))
        if not err <= AGREE_RTOL:
            raise RuntimeError(f"row 1, n={n}: contenders disagree (max relative difference {err:.3g} "
                               f"> {AGREE_RTOL:g}); refusing to time them")
        log(f"row 1: n = d = {n}")
        res = interleaved({
            "generated": lambda: rhs(V, a, w),
            "handwritten": lambda: handwritten_rhs(V, a, w),
            "autograd": auto,
        }, reps=reps, min_sample_s=0.002 if mode == "smoke" else 0.02)
        tg, th, ta = (res[k]["median_s"] for k in ("generated", "handwritten", "autograd"))
        sg, sh, sa = (res[k]["samples_s"] for k in ("generated", "handwritten", "autograd"))
        r_gh = [ratio(g, h) for g, h in zip(sg, sh)]  # each round's own ratio (same round, same load)
        r_ag = [ratio(x, g) for x, g in zip(sa, sg)]
        case = f"n=d={n}"
        at_target = n == TARGET_N
        lines.append({
            "case": case, "softpolar": "generated numpy", "anchor": "hand-written numpy",
            "softpolar_s": tg, "anchor_s": th, "ratio_label": "generated/hand-written",
            "ratio": median(r_gh), "ratios": r_gh, "target": "<= 1.5" if at_target else None,
            "met": (median(r_gh) <= 1.5) if at_target else None,
            "notes": f"agree to {err:.1e} rel; {reps} interleaved reps",
        })
        lines.append({
            "case": case, "softpolar": "generated numpy", "anchor": "torch autograd",
            "softpolar_s": tg, "anchor_s": ta, "ratio_label": "autograd/generated",
            "ratio": median(r_ag), "ratios": r_ag, "target": ">= 2" if at_target else None,
            "met": (median(r_ag) >= 2) if at_target else None,
            "notes": f"torch threads {torch.get_num_threads()}",
        })
        if at_target and not all(line["met"] for line in lines[-2:]):
            profile = (profile_generated(rhs, V, a, w, calls=2000)
                       + "\nstage breakdown (interleaved medians):\n" + stage_breakdown(rhs, V, a, w))
    out = {"lines": lines}
    if profile is not None:
        out["profile"] = profile
    return out
