r"""Rigorous freezing of converged states: a tail bound on the remaining path length.

Along the gradient flow $\dot\theta=-\nabla F(\theta)$, $\theta=(V,a)$, $F=\mathcal L(V\varphi(a))$,
for a link whose weights sum to one, $\sum_i\varphi_i\equiv1$ (so $\|\varphi\|^2\ge(\sum_i\varphi_i)^2/n=1/n$
by Cauchy-Schwarz):

.. math::
    \|\nabla F\|^2\ \ge\ \|\nabla_V F\|^2=\|g\|^2\|\varphi\|^2\ \ge\ \tfrac1n\|g\|^2,\qquad g=\nabla\mathcal L(\beta).

If the loss satisfies a Polyak–Łojasiewicz inequality $\|g\|^2\ge2\mu(\mathcal L-\mathcal L^*)$ on
the sublevel set it will stay in, then $\frac{d}{dt}\sqrt{F-F^*}\le-\sqrt{\mu/(2n)}\,\|\nabla F\|$
and the path length after $t$ obeys

.. math::
    \int_t^\infty\|\dot\theta\|\,dt'\ \le\ B(t)=\sqrt{2n\,(F(t)-F^*)/\mu}.

So every later state lies within $B(t)$ of $\theta(t)$, and once $B(t)\le$ ``FREEZE_FACTOR``
times the local tolerance the state is frozen; the trajectory reports ``frozen_at`` and ``freeze_bound``. [D] (derived
for this project; paper-notes#output-dynamics gives $M\succeq\frac1nI$; the brief gives the square-loss form.)

* **square**, $\mathcal L=\tfrac12\|X\beta-y\|^2$: $g=X^\top r$ lies in $\operatorname{range}X^\top$, so
  $\|g\|^2\ge\sigma_+^2\|r_{\rm range}\|^2=2\mu(\mathcal L-\mathcal L^*)$ with $\mu=\sigma_+(X)^2$ (smallest
  nonzero singular value; $\mu=1$ for $X=I$). With $\mathcal L-\mathcal L^*\le\|g\|^2/(2\mu)$:
  $B\le\sqrt n\,\|g\|/\mu$.
* **kl** with $p_k>0$, $S=\sum p$, $p'=p/S$, $q=\operatorname{softmax}(\beta)$: $g=S(q-p')$,
  $\mathcal L-\mathcal L^*=S\,\mathrm{KL}(p'\|q)\le S\chi^2$, $\chi^2=\sum_k(q_k-p'_k)^2/q_k$;
  Pinsker ($|q_k-p'_k|\le\mathrm{TV}\le\sqrt{\mathrm{KL}/2}$) and the monotone loss give
  $q_k\ge p'_{\min}-\sqrt{\chi^2/2}$ for all later times, hence $\|g\|^2\ge S^2q_{\min}\mathrm{KL}$, i.e.
  $\mu=S(p'_{\min}-\sqrt{\chi^2/2})/2$ when positive, and $B=\sqrt{2nS\chi^2/\mu}$.

The weights sum to one exactly when the link is normalized, $\varphi_i=h(a_i)/(c+\sum_jk(a_j))$, with
$c=0$ and $k=h$: :func:`weights_sum_to_one` establishes both from the definition ($c=0$ and $k-h\equiv0$ proven
by :func:`theorems.prove_zero`; a spot check is not enough), never from a name. Otherwise nothing bounds
$\|\varphi\|$ from below (softmax1, $c=1$: $\sum_i\varphi_i=1-1/Z\to0$ as the logits fall, and the state
keeps moving long after $\|g\|$ is tiny), so there is no rule and the integrator runs on.

No rule (``None``) either for the logistic loss (it never converges at finite parameters), for
elementwise links (sigmoid: no lower bound on $\|\varphi\|$), a kl target with a zero entry,
or a numerically rank-deficient design. The bound is evaluated in the backend's arithmetic;
its own rounding error is relative and far below the safety of the comparison.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np

from theorems import get_link, prove_zero, same_loss

from ..rhs import flow_rhs

_EPS = np.finfo(np.float64).eps
#: freeze once $B\le$ FREEZE_FACTOR $\times\max(\mathrm{atol},\mathrm{rtol}\,\|\theta\|)$: the frozen state is then
#: within 100 local tolerances of the true one, below the global error of the integration
#: itself (whose numerical residual, and hence $\|g\|$, cannot fall far below the local
#: tolerance: a stricter threshold would never be met).
FREEZE_FACTOR = 100.0


class FreezeRule:
    """The tail bound $B(\\theta)$ for one problem; build with :func:`freeze_rule`."""

    def __init__(self, problem, kind: str, mu=None):
        self.problem = problem
        self.kind = kind
        self.mu = mu  # square: float lower bound of sigma_+(X)^2
        self.n = problem.n
        p = problem.target
        if kind == "kl":
            self.S = float(np.sum(p))
            self.pmin = float(np.min(p)) / self.S

    def describe(self) -> str:
        if self.kind == "square":
            return (f"square-loss tail bound B = sqrt(n)*|g|/mu, mu = sigma_+(X)^2 >= {self.mu:.6g}")
        return "kl tail bound B = sqrt(2 n S chi2 / mu), mu = S (p'_min - sqrt(chi2/2)) / 2"

    # -- numpy (single state or batch) ------------------------------------------------------
    def bound_np(self, V, a):
        pr = self.problem
        rhs = flow_rhs(pr.loss, pr.link)
        beta = rhs.output(V, a)
        g = rhs.grad_loss(beta, pr.target, pr.X)
        if self.kind == "square":
            return math.sqrt(self.n) * np.linalg.norm(g, axis=-1) / self.mu
        q = (g + pr.target) / self.S
        with np.errstate(divide="ignore", invalid="ignore"):
            chi2 = np.sum((g / self.S) ** 2 / q, axis=-1)
            r = self.pmin - np.sqrt(np.maximum(chi2, 0) / 2)
            mu = self.S * r / 2
            B = np.sqrt(2 * self.n * self.S * chi2 / mu)
        ok = np.all(q > 0, axis=-1) & (r > 0) & np.isfinite(B)
        return np.where(ok, B, np.inf)

    # -- torch (batch) ------------------------------------------------------------------------
    def bound_torch(self, V, a, target, X):
        import torch
        pr = self.problem
        rhs = flow_rhs(pr.loss, pr.link, backend="torch")
        beta = rhs.output(V, a)
        g = rhs.grad_loss(beta, target, X)
        if self.kind == "square":
            return math.sqrt(self.n) * torch.linalg.vector_norm(g, dim=-1) / self.mu
        S = target.sum(dim=-1)
        pmin = target.amin(dim=-1) / S
        q = (g + target) / S[..., None]
        chi2 = ((g / S[..., None]) ** 2 / q).sum(dim=-1)
        r = pmin - torch.sqrt(chi2.clamp(min=0) / 2)
        B = torch.sqrt(2 * self.n * S * chi2 / (S * r / 2))
        ok = (q > 0).all(dim=-1) & (r > 0) & torch.isfinite(B)
        return torch.where(ok, B, torch.full_like(B, math.inf))

    # -- mpmath (single state, lists) -----------------------------------------------------
    def bound_mp(self, V, a, target, X):
        pr = self.problem
        rhs = flow_rhs(pr.loss, pr.link, backend="mpmath")
        beta = rhs.output(V, a)
        g = rhs.grad_loss(beta, target, X)
        if self.kind == "square":
            return mpmath.sqrt(self.n) * mpmath.norm(g) / self.mu
        S = mpmath.fsum(target)
        q = [(gk + pk) / S for gk, pk in zip(g, target)]
        if any(not qk > 0 for qk in q):
            return mpmath.inf
        chi2 = mpmath.fsum((gk / S) ** 2 / qk for gk, qk in zip(g, q))
        r = min(target) / S - mpmath.sqrt(chi2 / 2)
        if not r > 0:
            return mpmath.inf
        return mpmath.sqrt(2 * self.n * S * chi2 / (S * r / 2))


_SUMS_TO_ONE: dict = {}


def weights_sum_to_one(link) -> bool:
    r"""Whether $\sum_i\varphi_i(a)=1$ for all $a$ is *proven* for ``link`` (a name or a definition).

    True exactly for a normalized link with $c=0$ and $k=h$, both established from the definition:
    structurally, or by :func:`theorems.prove_zero` with status ``proved`` (a numeric spot check does not count).
    The freeze bounds assume it (module docstring). Cached per definition.
    """
    lk = get_link(link)
    out = _SUMS_TO_ONE.get(lk.key)
    if out is None:
        if not lk.normalized:
            out = False
        else:
            c_zero = lk.c == 0 or prove_zero(lk.c).status == "proved"
            out = bool(c_zero and (lk.k_is_h or prove_zero(lk.expr_k - lk.expr_h).status == "proved"))
        _SUMS_TO_ONE[lk.key] = out
    return out


def freeze_rule(problem) -> FreezeRule | None:
    """The :class:`FreezeRule` for ``problem``, or ``None`` when no rigorous bound applies."""
    if getattr(problem, "frozen", ()):
        return None  # the tail bounds are derived for the full flow
    if not weights_sum_to_one(problem.link):
        return None  # the bounds need |phi|^2 >= 1/n, i.e. weights that sum to one (module docstring)
    # the tail bounds are derived for these two definitions (whatever they are called)
    if same_loss(problem.loss, "square"):
        if problem.X is None:
            return FreezeRule(problem, "square", mu=1.0)
        s = np.linalg.svd(problem.X, compute_uv=False)
        # a computed singular value is within ~ eps * max(m, d) * s_max of the true one; a
        # value that small could be an exact zero (rank deficiency): then no rigorous mu.
        err = 4 * _EPS * max(problem.X.shape) * float(s[0])
        if not float(s[-1]) > 2 * err:
            return None
        return FreezeRule(problem, "square", mu=(float(s[-1]) - err) ** 2)
    if same_loss(problem.loss, "kl"):
        if float(np.min(problem.target)) <= 0:
            return None
        return FreezeRule(problem, "kl")
    return None
