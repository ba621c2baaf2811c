"""Tolerances, stated once with their reasons, and the comparison helpers.

float64 kernels: the flow is a handful of dot products and one normalization;
forward error is a few ulps times the condition of the sum, so 1e-12 relative
(about 4500 ulps) leaves room for n, d up to a few hundred while still catching
any wrong term (a missing term is O(1) relative). The absolute floor, 1e-13 of the
scale of the computation (about 450 ulps), covers results that cancel to ~0.

float32 (opt-in, ``SOFTPOLAR_TEST_FLOAT32=1``): the same error analysis holds in
units of the dtype's machine epsilon (the kernels do the same operations, the
bound is k * eps * condition with the same k), so the float32 tolerances are the
float64 ones rescaled by eps32 / eps64 = 2**29: the same 4500 / 450 ulps, i.e.
5.4e-4 relative and 5.4e-5 absolute. ``tests/test_helpers.py`` checks that the
float32 torch kernels meet them against a float64 reference and that an O(1e-2)
relative perturbation does not.

Conditioning: where an input magnifies rounding, the caller passes ``cond``
(documented at the call site), e.g. ``1 + max|a_i - a_j|`` for $e^{a_i-\\max a}$:
the rounding of the shifted logit, about eps * |a_i - max a| absolute, becomes a
relative error of the same size in $e^{(\\cdot)}$.

mpmath: a comparison at ``dps`` digits allows a loss of 5 digits to cancellation.
"""
from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

#: machine epsilon by dtype name.
EPS = {"float64": float(np.finfo(np.float64).eps), "float32": float(np.finfo(np.float32).eps)}
#: relative tolerance by dtype name, see the module docstring for the reasons.
RTOL = {"float64": 1e-12}
#: absolute floor, relative to the scale of the compared arrays.
ATOL_SCALE = {"float64": 1e-13}
# float32: the same budget in ulps (module docstring), derived rather than typed.
RTOL["float32"] = RTOL["float64"] * EPS["float32"] / EPS["float64"]
ATOL_SCALE["float32"] = ATOL_SCALE["float64"] * EPS["float32"] / EPS["float64"]

#: absolute floor by dtype: the smallest normal number. Results that pass through
#: subnormal intermediates (e^{a_i - max a} for gaps beyond ~87 in float32, ~708 in
#: float64) lose relative accuracy; an error below this floor is rounding, not a bug.
TINY = {"float64": float(np.finfo(np.float64).tiny), "float32": float(np.finfo(np.float32).tiny)}

#: dtypes the torch properties run under: float64 always, float32 when opted in.
DTYPES = ("float64", "float32") if os.environ.get("SOFTPOLAR_TEST_FLOAT32") == "1" else ("float64",)


def tolerance(dtype: str = "float64") -> tuple[float, float]:
    """(rtol, atol-scale) for ``dtype``."""
    return RTOL[dtype], ATOL_SCALE[dtype]


def to_numpy(x):
    """``x`` (torch tensor, numpy array, list or number) as a float64 numpy array."""
    if hasattr(x, "detach"):
        return x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=float)


def to_torch(x, *, device="cpu", dtype="float64"):
    """``x`` (numpy, list or ``None``) as a torch tensor on ``device`` with ``dtype`` (a name)."""
    import torch

    if x is None:
        return None
    return torch.as_tensor(np.asarray(x, dtype=np.float64)).to(device=device, dtype=getattr(torch, dtype))


def _bounds(expected, *, dtype, scale, cond):
    rtol, atol_scale = tolerance(dtype)
    if cond < 1:
        raise ValueError(f"cond={cond!r}: a condition factor is >= 1")
    if scale is None:
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    scale = np.abs(np.asarray(scale, dtype=float))
    return cond * rtol, cond * atol_scale * scale + TINY[dtype]


def assert_close(actual, expected, *, dtype: str = "float64", what: str = "value",
                 scale=None, cond: float = 1.0) -> None:
    """Assert ``actual`` equals ``expected`` within the tolerance for ``dtype``.

    |actual - expected| <= cond * (rtol * |expected| + atol_scale * scale) + TINY[dtype],
    entrywise.
    ``scale`` (scalar or broadcastable array) is the magnitude of the terms that
    produced ``expected``; by default ``max|expected|``, so that entries that
    cancel to ~0 do not demand impossible relative accuracy. Pass it explicitly
    when the result itself cancels (an identity whose value is 0). ``cond`` >= 1
    is a stated condition factor (see the module docstring).
    """
    actual, expected = to_numpy(actual), to_numpy(expected)
    expected = np.broadcast_to(expected, actual.shape) if expected.ndim == 0 else expected
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite entries {actual[~np.isfinite(actual)][:5]}"
    rtol, atol = _bounds(expected, dtype=dtype, scale=scale, cond=cond)
    err = np.abs(actual - expected)
    bound = atol + rtol * np.abs(expected)
    worst = float(np.max(err - bound)) if err.size else -1.0
    assert worst <= 0, (
        f"{what}: max abs error {float(np.max(err)):.3e} exceeds rtol={rtol:g}, "
        f"atol={float(np.max(atol)):.3e}"
    )


def assert_le(smaller, larger, *, dtype: str = "float64", what: str = "inequality",
              scale=None, cond: float = 1.0) -> None:
    """Assert ``smaller <= larger`` up to the absolute floor ``cond * atol_scale * scale + TINY``.

    ``scale`` defaults to ``max(|smaller|, |larger|)``: an inequality between two
    computed numbers is decided only beyond their rounding.
    """
    smaller, larger = to_numpy(smaller), to_numpy(larger)
    if scale is None:
        scale = max(float(np.max(np.abs(smaller), initial=0.0)), float(np.max(np.abs(larger), initial=0.0)))
    _, atol = _bounds(larger, dtype=dtype, scale=scale, cond=cond)
    assert np.all(np.isfinite(smaller)) and np.all(np.isfinite(larger)), f"{what}: non-finite values"
    excess = smaller - larger - atol
    assert float(np.max(excess)) <= 0, (
        f"{what}: violated by {float(np.max(smaller - larger)):.3e} (allowed {float(np.max(atol)):.3e})"
    )


# ----------------------------------------------------------------------------------------
# Scales of the flow: what each computed quantity's rounding is relative to.
class FlowScales:
    r"""Magnitudes that bound the rounding of each term of the flow at one problem.

    Computed in float64 from the problem's definition (not from the code under
    test). With $s=\sigma(a)$, $\beta=Vs$:

    * ``G`` (length $d$): the magnitude of the terms summed in $g=\nabla\mathcal L(\beta)$
      (logistic $|w|$; square $|X|^\top(|X||\beta|+|y|)$; kl $P\,\mathrm{softmax}(\beta)+p$);
    * ``dV`` $=G\,s^\top$, the scale of $\dot V=-gs^\top$ entry by entry;
    * ``f`` $=|V|^\top G$ bounds the fitness $f=-V^\top g$; ``da`` $=s\odot(f+\langle s,f\rangle)$
      the scale of $\dot a_i=s_i(f_i-\bar f)$, which cancels;
    * ``cond``: $(1+\operatorname{span}(a))(1+c_g)$. The first factor is the relative
      error of $e^{a_i-\max a}$ (module docstring); the second the sensitivity of $g$
      to a relative error of $\beta$: $c_g=\max_k(|V|s)_k\cdot(1+\max|\text{target}|)$
      (logistic: $\sigma'$ turns an error in $z=\langle w,\beta\rangle$ into a relative
      one in $\ell'(z)$; kl: the same for $\mathrm{softmax}(\beta)$; square: $1$).
    """

    def __init__(self, problem):
        V, a, target, X = (None if x is None else np.asarray(x, dtype=np.float64) for x in problem.arrays())
        e = np.exp(a - np.max(a))
        s = e / np.sum(e)
        beta = V @ s
        if problem.loss == "logistic":
            G = np.abs(target)
        elif problem.loss == "square":
            Xa = np.eye(V.shape[0]) if X is None else np.abs(X)
            G = Xa.T @ (Xa @ np.abs(beta) + np.abs(target))
        else:
            q = np.exp(beta - np.max(beta))
            G = np.sum(target) * q / np.sum(q) + target
        self.s, self.beta, self.G = s, beta, G
        self.dV = np.outer(G, s)
        self.f = np.abs(V).T @ G
        self.da = s * (self.f + s @ self.f)
        span = float(np.max(a) - np.min(a))
        c_g = 1.0 if problem.loss == "square" else \
            float(np.max(np.abs(V) @ s)) * (1 + float(np.max(np.abs(target))))
        self.cond = (1 + span) * (1 + c_g)


def smoothness_bound(problem) -> float:
    r"""An upper bound $H$ on $\nabla^2F$ near the problem's point (for step sizes).

    Derivation (docstring, [D]): for a unit direction $(U,b)$,
    $\beta'=Us+VJb$, $\beta''=2UJb+Vs''[b,b]$ with $\|J\|\le1$ and
    $\|s''[b,b]\|\le3\|b\|^2$, so
    $F''\le\lambda_{\mathcal L}(1+\|V\|)^2+3\|g\|(1+\|V\|)$ with $\lambda_{\mathcal L}$ the
    Lipschitz constant of $\nabla\mathcal L$ (logistic $\|w\|^2/4$, square $\|X\|_2^2$,
    kl $\sum p$). To cover a step of length $\le$ ``rhs_norm``$/(2H)$, $\|V\|$ is
    inflated by 1 and $\|g\|$ by $\lambda_{\mathcal L}(2+\|V\|)$ (the change of $\beta$
    over the step is at most $(1+\|V\|)$ times the step), then the bound is doubled.
    A step of size $\eta\le1/(2H)$ has length $\le\|\nabla F\|/(2H)\le 1/12$ (as
    $H\ge6\|g\|(1+\|V\|)\ge6\|\nabla F\|$), inside that allowance, and a GD step
    decreases $F$ by at least $\tfrac34\eta\|\nabla F\|^2$.
    """
    V, a, target, X = (None if x is None else np.asarray(x, dtype=np.float64) for x in problem.arrays())
    if problem.loss == "logistic":
        lam = float(target @ target) / 4
    elif problem.loss == "square":
        lam = 1.0 if X is None else float(np.linalg.norm(X, 2)) ** 2
    else:
        lam = float(np.sum(target))
    nV = float(np.linalg.norm(V, 2)) + 1.0
    g = FlowScales(problem).G
    ng = float(np.linalg.norm(g)) + lam * (1 + nV)
    return 2.0 * (lam * (1 + nV) ** 2 + 3 * ng * (1 + nV))


# ----------------------------------------------------------------------------------------
#: deliberate bugs for negative controls (and the mutation check: a planted bug each claim must catch).
MUTATIONS = ("flip_da", "no_ssT", "no_max_shift", "wrong_dell")


class TextbookRHS:
    r"""The flow written directly from its definition in torch, optionally with one bug.

    Same interface as :class:`numerics.FlowRHS` (``phi``, ``jvp_T``, ``grad_loss``,
    ``loss_value``, ``output``, call -> ``(dV, da)``), softmax link only:
    $s=\mathrm{softmax}(a)$, $J^\top x=s\odot(x-\langle s,x\rangle)$, $g$ by autograd of
    the loss, $\dot V=-gs^\top$, $\dot a=-J^\top V^\top g$. With ``mutation=None`` it
    is an independent oracle; with one of :data:`MUTATIONS` it is the wrong variant a
    property must reject:

    * ``flip_da``: $\dot a$ with the wrong sign;
    * ``no_ssT``: $J^\top x=s\odot x$ (the $ss^\top$ term dropped);
    * ``no_max_shift``: $s=e^a/\sum e^a$ without subtracting $\max a$;
    * ``wrong_dell``: logistic $\ell'(z)=-\sigma(z)$ instead of $-\sigma(-z)$.
    """

    link = "softmax"

    def __init__(self, loss: str, mutation: str | None = None):
        if mutation not in (None, *MUTATIONS):
            raise ValueError(f"mutation={mutation!r}; expected None or one of {MUTATIONS}")
        self.loss, self.mutation = loss, mutation

    def phi(self, a):
        import torch
        if self.mutation == "no_max_shift":
            e = a.exp()
            return e / e.sum(-1, keepdim=True)
        return torch.softmax(a, dim=-1)

    def jvp_T(self, a, x):
        s = self.phi(a)
        if self.mutation == "no_ssT":
            return s * x
        return s * (x - (s * x).sum(-1, keepdim=True))

    def _loss_of_beta(self, beta, target, X=None):
        import torch
        if self.loss == "logistic":
            return torch.nn.functional.softplus(-(target * beta).sum(-1))
        if self.loss == "square":
            r = beta - target if X is None else (X @ beta[..., None])[..., 0] - target
            return 0.5 * (r * r).sum(-1)
        return -(target * torch.log_softmax(beta, dim=-1)).sum(-1)

    def grad_loss(self, beta, target, X=None):
        import torch
        if self.loss == "logistic" and self.mutation == "wrong_dell":
            return -torch.sigmoid((target * beta).sum(-1, keepdim=True)) * target
        with torch.enable_grad():
            b = beta.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self._loss_of_beta(b, target, X).sum(), b)
        return g

    def output(self, V, a):
        return (V @ self.phi(a)[..., None])[..., 0]

    def loss_value(self, V, a, target, X=None):
        return self._loss_of_beta(self.output(V, a), target, X)

    def __call__(self, V, a, target, X=None):
        s = self.phi(a)
        g = self.grad_loss(self.output(V, a), target, X)
        dV = -g[..., :, None] * s[..., None, :]
        da = self.jvp_T(a, -(g[..., None, :] @ V)[..., 0, :])
        return dV, (-da if self.mutation == "flip_da" else da)


def jacobian_via_jvp(rhs, a):
    r"""$J_\varphi(a)$ assembled from ``rhs.jvp_T`` applied to the basis vectors.

    Row $k$ of the result is $J^\top e_k$, i.e. the result $M$ has $M_{ki}=J_{ki}$.
    """
    import torch
    n = a.shape[-1]
    eye = torch.eye(n, dtype=a.dtype, device=a.device)
    return rhs.jvp_T(a.expand(n, n), eye)


def torch_arrays(problem, *, device="cpu", dtype="float64"):
    """``(V, a, target, X)`` of a :class:`numerics.strategies.FlowProblem` as torch tensors."""
    return tuple(to_torch(x, device=device, dtype=dtype) for x in problem.arrays())


def rk4_step(rhs, V, a, target, X, h):
    """One classical Runge-Kutta step of the flow (a reference integrator for tests)."""
    k1 = rhs(V, a, target, X)
    k2 = rhs(V + h / 2 * k1[0], a + h / 2 * k1[1], target, X)
    k3 = rhs(V + h / 2 * k2[0], a + h / 2 * k2[1], target, X)
    k4 = rhs(V + h * k3[0], a + h * k3[1], target, X)
    return (V + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
            a + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))


# ----------------------------------------------------------------------------------------
# The symbolic oracle: SymPy-derived flow, lambdified to mpmath. Shares no code with the
# structured kernels of numerics (only the SymPy definitions in theorems).
@lru_cache(maxsize=None)
def _symbolic_kernels(loss: str, n: int, d: int, design: bool):
    import sympy as sp

    from numerics import lambdify_checked
    from theorems import SymbolicModel

    model = SymbolicModel(loss, "softmax", n, d, design="symbolic" if design else "identity")
    dV, da = model.flow()  # scalar differentiation of the objective (claim 1)
    args = list(model.V) + list(model.a) + list(model.target) + (list(model.X) if design else [])
    outputs = sp.Tuple(*dV, *da, *model.phi, model.objective)
    return lambdify_checked(args, outputs, backend="mpmath")


def symbolic_oracle(problem, *, dps: int = 30) -> dict:
    """``dV``, ``da``, ``phi``, ``loss`` of ``problem`` from the SymPy-derived flow at ``dps`` digits.

    Inputs enter as their exact binary values (``mpf(float)`` is exact); results are
    rounded to float64. Derivations are cached per (loss, n, d, design): keep n, d small.
    """
    import mpmath

    fn = _symbolic_kernels(problem.loss, problem.n, problem.d, problem.X is not None)
    V, a, target, X = problem.arrays()
    values = [*np.ravel(V), *a, *target] + ([] if X is None else [*np.ravel(X)])
    with mpmath.workdps(dps):
        out = np.array([float(x) for x in fn(*[mpmath.mpf(float(v)) for v in values])])
    d, n = problem.d, problem.n
    return {"dV": out[: d * n].reshape(d, n), "da": out[d * n: d * n + n],
            "phi": out[d * n + n: d * n + 2 * n], "loss": float(out[-1])}


def cli(capsys, *args):
    """``softpolar`` run in-process: ``(exit code, stdout, stderr)``."""
    from softpolar import main
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_error_line(err: str, prefix: str = "softpolar: error: ") -> str:
    """The one line of a refused command's stderr (asserted: one non-empty line, the prefix, no traceback)."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err
    return lines[0]
