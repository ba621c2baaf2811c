r"""Generated right-hand sides of the gradient flow, for numpy, torch and mpmath.

:func:`flow_rhs` returns a :class:`FlowRHS` with the fixed argument order
``(V, a, target, X=None)`` and

.. math::
    \dot V=-g\,\varphi(a)^\top,\qquad \dot a=-J_\varphi(a)^\top V^\top g,\qquad g=\nabla\mathcal L(V\varphi(a)),

evaluated size-generically (any ``n``, ``d``; batched over leading axes for the
array backends). What is generated from :mod:`theorems`:

* the link generator $h$ and its derivative $h'$ (derived by SymPy), lambdified;
* the margin loss $\ell$ and $\ell'$ (logistic), lambdified;

and they enter the *structured* forms $J_\varphi^\top x = (h'(a)/Z)\odot(x-\langle\varphi,x\rangle\mathbf 1)$
and $g=\ell'(z)w$, $X^\top(X\beta-y)$, $(\textstyle\sum p)\operatorname{softmax}(\beta)-p$, which
``softpolar derive --check`` proves equal to the component-wise SymPy derivative
(identities ``flow.structured`` and ``jacobian.structured``). The tests compare
every backend with torch autograd and SymPy ``evalf``.

Numerical choices: softmax subtracts $\max_i a_i$ first (exact, by the proven
shift invariance); the kl loss uses a shifted log-sum-exp.

Shapes (array backends): ``V (..., d, n)``, ``a (..., n)``, ``target (..., m)``,
``X (..., m, d)``. mpmath backend: ``V`` a list of ``d`` rows (lists of ``n``
numbers), ``a`` / ``target`` lists, ``X`` a list of rows; numbers become ``mpf``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Callable

import mpmath
import numpy as np
import sympy as sp

from theorems import InvalidArgument, Link, get_link, get_loss

from .lambdify import BACKENDS, lambdify_checked
from theorems import check_choice

#: one frozen-parameter entry: ``V``, ``a`` (a whole block) or ``V[j]``, ``a[j]`` (token ``j``, from 0);
#: numerics.Problem validates specs with it, the right-hand side masks with :func:`frozen_masks`
_FROZEN = re.compile(r"^(V|a)(?:\[(\d{1,9})\])?$")


def frozen_masks(frozen: tuple, n: int):
    """``(mV, ma)`` float64 ``(n,)`` multipliers for a canonical ``frozen`` spec, or ``None`` if empty."""
    if not frozen:
        return None
    mV, ma = np.ones(n), np.ones(n)
    for it in frozen:
        m = _FROZEN.match(it)
        target = mV if m.group(1) == "V" else ma
        if m.group(2) is None:
            target[:] = 0.0
        else:
            target[int(m.group(2))] = 0.0
    return mV, ma


_x = sp.Symbol("x", real=True)
_z = sp.Symbol("z", real=True)


# ----------------------------------------------------------------------------------------
# array adapters: the same template runs on numpy and torch
@dataclass(frozen=True)
class _ArrayOps:
    """The array operations the generated templates call, for one array library: ``amax`` and ``sum`` over the
    last axis (kept, for broadcasting) and ``mT``, the transpose of the last two axes."""
    name: str
    amax: Callable
    sum: Callable
    mT: Callable


# ndarray methods, not np.max / np.sum: the module-level wrappers cost ~1 us each,
# a quarter of one RHS call at n = 8 (bit-identical results).
_NUMPY_OPS = _ArrayOps("numpy", amax=lambda x: x.max(axis=-1, keepdims=True),
                       sum=lambda x: x.sum(axis=-1, keepdims=True), mT=lambda x: np.swapaxes(x, -1, -2))
_TORCH_OPS = _ArrayOps("torch", amax=lambda x: x.amax(dim=-1, keepdim=True),
                       sum=lambda x: x.sum(dim=-1, keepdim=True), mT=lambda x: x.transpose(-1, -2))


def _array_ops(backend: str) -> _ArrayOps:
    """numpy's operations for ``backend="numpy"``, torch's otherwise (the mpmath engine calls none of them)."""
    return _NUMPY_OPS if backend == "numpy" else _TORCH_OPS


@dataclass(frozen=True)
class FlowRHS:
    """Generated gradient-flow right-hand side for one (loss, link, backend).

    Call it as ``dV, da = rhs(V, a, target, X)``. Also exposes :meth:`phi`,
    :meth:`loss_value`, :meth:`grad_loss` and :meth:`jvp_T` ($J_\\varphi^\\top x$), and the
    two kernels behind ``phi`` and ``jvp_T``, for callers that need both at one ``a``
    (one evaluation of $h$ instead of two; the ``tau`` clock of :mod:`numerics.integrate._mpmath`):

    * :meth:`link_parts` ``(a) -> (phi, w)``: $\\varphi(a)$ and the weights $w$ of the
      structured Jacobian, $w=h'(a)/Z$ for a normalized link ($Z=\\sum_j h(a_j)$, after the
      max shift for softmax), $w=h'(a)$ for an elementwise one;
    * :meth:`apply_jT` ``(phi, w, x)``: $J_\\varphi(a)^\\top x=w\\odot(x-\\langle\\varphi,x\\rangle\\mathbf 1)$
      (normalized) or $w\\odot x$ (elementwise), from ``link_parts(a)``.

    So ``phi(a) == link_parts(a)[0]`` and ``jvp_T(a, x) == apply_jT(*link_parts(a), x)``.
    Shapes: array backends ``a``, ``x``, ``phi``, ``w`` all ``(..., n)`` (batched over the
    leading axes); mpmath lists of ``n`` numbers (``phi``, ``w`` and the result are ``mpf``).
    """

    loss: str
    link: str
    backend: str
    frozen: tuple = ()

    def __post_init__(self):
        # definitions may be passed as objects: registered, and stored by name (the cache key)
        object.__setattr__(self, "loss", get_loss(self.loss).name)
        object.__setattr__(self, "link", get_link(self.link).name)
        check_choice("backend", self.backend, BACKENDS)
        if not isinstance(self.frozen, tuple):
            raise InvalidArgument(f"frozen={self.frozen!r} is not allowed; expected a tuple (see numerics.Problem)")

    def _masks(self, n):
        """Multipliers ``(mV, ma)`` of the frozen parameters (``numerics.Problem.frozen``), or ``None``."""
        masks = frozen_masks(self.frozen, n)
        if masks is None or self.backend == "numpy":
            return masks
        if self.backend == "mpmath":
            return [mpmath.mpf(v) for v in masks[0]], [mpmath.mpf(v) for v in masks[1]]
        return masks

    def _freeze(self, dV, da):
        if not self.frozen:
            return dV, da
        n = len(da) if self.backend == "mpmath" else da.shape[-1]
        mV, ma = self._masks(n)
        if self.backend == "mpmath":
            return [[v * m for v, m in zip(row, mV)] for row in dV], [v * m for v, m in zip(da, ma)]
        if self.backend == "torch":
            import torch
            mV = torch.as_tensor(mV, dtype=da.dtype, device=da.device)
            ma = torch.as_tensor(ma, dtype=da.dtype, device=da.device)
        return dV * mV, da * ma

    # ---- generated kernels -------------------------------------------------------------
    def _gen(self, args, expr):
        return lambdify_checked(args, expr, backend=self.backend)

    @cached_property
    def _link_def(self):
        return get_link(self.link)

    @cached_property
    def _loss_def(self):
        return get_loss(self.loss)

    @cached_property
    def _h(self):
        return self._gen([_x], self._link_def.h(_x))

    @cached_property
    def _dh(self):
        return self._gen([_x], self._link_def.dh(_x))

    @cached_property
    def _k(self):
        return self._gen([_x], self._link_def.k(_x))

    @cached_property
    def _dk(self):
        return self._gen([_x], self._link_def.dk(_x))

    @cached_property
    def _ell(self):
        loss = self._loss_def
        return None if loss.ell is None else self._gen([_z], loss.ell(_z))

    @cached_property
    def _dell(self):
        loss = self._loss_def
        return None if loss.dell is None else self._gen([_z], loss.dell(_z))

    @cached_property
    def _dh_is_h(self) -> bool:
        """$h'=h$ (softmax's exp): the weights of $J^\\top$ reuse $h(a)$ instead of recomputing it."""
        link = self._link_def
        return sp.simplify(link.dh(_x) - link.h(_x)) == 0

    @cached_property
    def _ops(self):
        return _array_ops(self.backend)

    # ---- link ------------------------------------------------------------------------
    def link_parts(self, a):
        """``(phi, w)``: $\\varphi(a)$ and the Jacobian weights,
        $J_\\varphi^\\top x = w\\odot(x-\\langle\\varphi,x\\rangle)$ (normalized) or $w\\odot x$.

        For a normalized link with $k\\ne h$, ``w`` is the pair $(h'(a)/Z, k'(a)/Z)$ and
        $J_\\varphi^\\top x=w_h\\odot x-w_k\\langle\\varphi,x\\rangle$.
        Shapes as ``a``: ``(..., n)`` arrays, or lists of ``n`` ``mpf`` (see the class docstring).
        """
        phi, w, _ = self._lk.parts(a)
        return phi, w

    @cached_property
    def _lk(self):
        return link_kernels(self._link_def, self.backend)

    def phi(self, a):
        """$\\varphi(a)$."""
        return self.link_parts(a)[0]

    def jvp_T(self, a, x):
        """$J_\\varphi(a)^\\top x$ (equal to $J_\\varphi x$ for the symmetric softmax Jacobian)."""
        phi, w = self.link_parts(a)
        return self.apply_jT(phi, w, x)

    def apply_jT(self, phi, w, x):
        """$J_\\varphi(a)^\\top x$ from ``(phi, w) = link_parts(a)``; ``x`` and the result have ``phi``'s shape."""
        normalized = self._link_def.normalized
        if self.backend == "mpmath":
            if not normalized:
                return [wi * xi for wi, xi in zip(w, x)]
            m = mpmath.fdot(phi, x)
            if isinstance(w, tuple):
                return [wh * xi - wk * m for wh, wk, xi in zip(w[0], w[1], x)]
            return [wi * (xi - m) for wi, xi in zip(w, x)]
        if not normalized:
            return w * x
        if isinstance(w, tuple):
            return w[0] * x - w[1] * self._ops.sum(phi * x)
        return w * (x - self._ops.sum(phi * x))

    # ---- loss ------------------------------------------------------------------------
    @cached_property
    def _loss_kernels(self):
        return _LOSS_KERNELS[self._loss_def.form](self)

    def grad_loss(self, beta, target, X=None):
        """$\\nabla\\mathcal L(\\beta)$ in structured form."""
        return self._loss_kernels.grad(beta, target, X)

    def loss_value(self, V, a, target, X=None):
        """$\\mathcal L(V\\varphi(a))$."""
        return self._loss_kernels.value(self.output(V, a), target, X)

    # ---- model -----------------------------------------------------------------------
    def output(self, V, a):
        """$\\beta=V\\varphi(a)$."""
        phi = self.phi(a)
        if self.backend == "mpmath":
            return [mpmath.fdot([mpmath.mpf(v) for v in row], phi) for row in V]
        return (V @ phi[..., None])[..., 0]

    def __call__(self, V, a, target, X=None):
        """Return ``(dV, da)`` at ``(V, a)``."""
        # through link_parts / apply_jT / grad_loss (one method call each): the planted-bug mutants patch them
        phi, w = self.link_parts(a)
        grad = self.grad_loss
        if self.backend == "mpmath":
            V = [[mpmath.mpf(v) for v in row] for row in V]
            beta = [mpmath.fdot(row, phi) for row in V]
            g = grad(beta, target, X)
            dV = [[-gk * pj for pj in phi] for gk in g]
            f = [-mpmath.fdot([V[k][j] for k in range(len(V))], g) for j in range(len(phi))]
            out = dV, self.apply_jT(phi, w, f)
            return self._freeze(*out) if self.frozen else out
        beta = (V @ phi[..., None])[..., 0]
        g = grad(beta, target, X)
        if self.backend == "numpy":
            # einsum writes the outer product g phi^T 1.7-3x faster than the broadcast
            # multiply (bit-identical; measured by `softpolar bench --rows 1`)
            dV = np.einsum("...i,...j->...ij", -g, phi)
        else:
            dV = -g[..., :, None] * phi[..., None, :]
        f = -(g[..., None, :] @ V)[..., 0, :]
        da = self.apply_jT(phi, w, f)
        return self._freeze(dV, da) if self.frozen else (dV, da)


# ----------------------------------------------------------------------------------------
# link kernels: phi, the Jacobian weights, and the normalizer, generated from (h, k, c)
class LinkKernels:
    r"""Generated kernels of one link on one backend: $h$, $h'$, $k$, $k'$ and the shift factor $g$.

    :meth:`parts` ``(a) -> (phi, w, logZ_parts)`` evaluates a normalized link with the *proven*
    shift law (:attr:`theorems.Link.shift_factor`): with $m=\max_ia_i$ and $a'=a-m$,
    $\varphi_i=h(a'_i)/Z'$, $Z'=c/g(m)+\sum_jk(a'_j)$, and the weights $h'(a'_i)/Z'$,
    $k'(a'_i)/Z'$ (exact rewrites: $h(x+t)=g(t)h(x)$ gives $h'(x+t)=g(t)h'(x)$). Without a proven
    shift law the link is evaluated as defined. The third item is ``(a', Z')`` for callers that need
    $\log\varphi$ (the cross-entropy loss).
    """

    def __init__(self, link, backend: str):
        self.link, self.backend = link, backend
        gen = lambda e: lambdify_checked([_x], e, backend=backend)
        self.h = gen(link.h(_x))
        self.dh = gen(link.dh(_x))
        self.dh_is_h = sp.simplify(link.dh(_x) - link.h(_x)) == 0
        if link.normalized:
            self.k = self.h if link.k_is_h else gen(link.k(_x))
            self.dk = self.dh if link.k_is_h else gen(link.dk(_x))
        self.shift = link.shift_factor is not None
        self.normalized = link.normalized
        self.k_is_h = link.normalized and link.k_is_h
        self.has_c = link.normalized and link.c != 0
        self.mp = backend == "mpmath"
        self.ops = _array_ops(backend)
        self.c = link.c
        self.c_term = None
        if self.shift and link.c != 0:
            self.c_term = gen(link.c / link.shift_factor(_x))   # c / g(m)
        self.cf = float(link.c)
        self.cmp = mpmath.mpf(int(sp.Rational(link.c).p)) / int(sp.Rational(link.c).q) if link.c.is_Rational \
            else mpmath.mpf(sp.N(link.c, 60))

    @cached_property
    def _k0(self):
        """$k(0)$ as a float when it is a positive finite number (the entry of $Z'$ at the maximum), else None."""
        k0 = sp.sympify(self.link.k(sp.Integer(0)) if self.link.normalized else 0)
        try:
            v = float(k0)
        except (TypeError, ValueError):
            return None
        return v if 0 < v < float("inf") else None

    def log_normalizer(self, a):
        r"""$\log Z'$ of :meth:`parts` on the array backends, accurate when $Z'$ is close to $k(0)$.

        With a proven shift law the largest shifted logit is 0, so $Z'=k(0)+R$ with
        $R=c/g(m)+\sum_{j\ne j^*}k(a'_j)$ (the other maxima included). $\log Z'=\log k(0)+\operatorname{log1p}(R/k(0))$
        is the same number in exact arithmetic, but in float64 it keeps its relative accuracy where $\log Z'$ is
        tiny (softmax with one dominant logit: $\log(1+e^{-13.5})$ from a rounded $Z'$ loses 10 digits).
        Without a shift law, or when $k(0)$ is not a positive number, $\log Z'$ as computed.
        """
        ops = self.ops
        np_ = self.backend == "numpy"
        if not (self.shift and self.normalized) or self._k0 is None:
            _, _, (_, Z) = self.parts(a)
            return np.log(Z) if np_ else Z.log()
        m = ops.amax(a)
        a = a - m
        K = self.h(a) if self.k_is_h else self.k(a)
        at_max = a == 0
        if np_:
            rest = np.where(at_max, 0.0, K).sum(axis=-1, keepdims=True)
            extra = at_max.sum(axis=-1, keepdims=True) - 1
        else:
            rest = K.masked_fill(at_max, 0.0).sum(dim=-1, keepdim=True)
            extra = at_max.sum(dim=-1, keepdim=True).to(K.dtype) - 1
        R = rest + extra * self._k0
        if self.has_c:
            R = R + (self.c_term(m) if self.c_term is not None else self.cf)
        lk0 = math.log(self._k0)
        return lk0 + (np.log1p(R / self._k0) if np_ else (R / self._k0).log1p())

    def parts(self, a):
        if self.mp:
            a = [mpmath.mpf(ai) for ai in a]
            m = None
            if self.shift:
                m = max(a)
                a = [ai - m for ai in a]
            H = [self.h(ai) for ai in a]
            W = H if self.dh_is_h else [self.dh(ai) for ai in a]
            if not self.normalized:
                return H, W, None
            K = H if self.k_is_h else [self.k(ai) for ai in a]
            Z = mpmath.fsum(K)
            if self.has_c:
                Z += self.c_term(m) if self.c_term is not None else self.cmp
            phi = [hi / Z for hi in H]
            if self.k_is_h:
                return phi, [wi / Z for wi in W], (a, Z)
            return phi, ([wi / Z for wi in W], [self.dk(ai) / Z for ai in a]), (a, Z)
        ops = self.ops
        m = None
        if self.shift:
            m = ops.amax(a)
            a = a - m
        H = self.h(a)
        W = H if self.dh_is_h else self.dh(a)
        if not self.normalized:
            return H, W, None
        Z = ops.sum(H if self.k_is_h else self.k(a))
        if self.has_c:
            Z = Z + (self.c_term(m) if self.c_term is not None else self.cf)
        if self.k_is_h:
            return H / Z, W / Z, (a, Z)
        return H / Z, (W / Z, self.dk(a) / Z), (a, Z)


@lru_cache(maxsize=None)
def link_kernels(link, backend: str) -> LinkKernels:
    """The cached :class:`LinkKernels` of a link (name or definition) on ``backend``."""
    return LinkKernels(link if isinstance(link, Link) else get_link(link), backend)


# ----------------------------------------------------------------------------------------
# loss kernels, one class per form of theorems.Loss; each generated from the form's expressions
def _exp(backend, x):
    return np.exp(x) if backend == "numpy" else x.exp()


def _log(backend, x):
    return np.log(x) if backend == "numpy" else x.log()


def _mp(xs):
    return [mpmath.mpf(t) for t in xs]


class _MarginKernels:
    r"""$\mathcal L=\ell(\langle w,\beta\rangle)$, $\nabla\mathcal L=\ell'(\langle w,\beta\rangle)w$."""

    def __init__(self, rhs):
        self.b = rhs.backend
        self.ops = rhs._ops
        self.ell, self.dell = rhs._ell, rhs._dell

    def grad(self, beta, target, X=None):
        if self.b == "mpmath":
            target = _mp(target)
            c = self.dell(mpmath.fdot(target, beta))
            return [c * t for t in target]
        return self.dell(self.ops.sum(target * beta)) * target

    def value(self, beta, target, X=None):
        if self.b == "mpmath":
            return self.ell(mpmath.fdot(_mp(target), beta))
        return self.ell(self.ops.sum(target * beta))[..., 0]


class _SeparableKernels:
    r"""$\mathcal L=\sum_rf((X\beta)_r,y_r)$, $\nabla\mathcal L=X^\top\partial_uf(X\beta,y)$."""

    def __init__(self, rhs):
        loss = rhs._loss_def
        u, y = loss.f.variables
        self.b = rhs.backend
        self.ops = rhs._ops
        self.f = lambdify_checked([u, y], loss.f(u, y), backend=self.b)
        self.fu = lambdify_checked([u, y], loss.fu(u, y), backend=self.b)

    def _rows(self, beta, X):
        if self.b == "mpmath":
            return beta if X is None else [mpmath.fdot(row, beta) for row in X]
        return beta if X is None else (X @ beta[..., None])[..., 0]

    def grad(self, beta, target, X=None):
        r = self._rows(beta, X)
        if self.b == "mpmath":
            fu = [self.fu(ri, ti) for ri, ti in zip(r, _mp(target))]
            if X is None:
                return fu
            return [mpmath.fdot([X[i][k] for i in range(len(X))], fu) for k in range(len(beta))]
        fu = self.fu(r, target)
        return fu if X is None else (self.ops.mT(X) @ fu[..., None])[..., 0]

    def value(self, beta, target, X=None):
        r = self._rows(beta, X)
        if self.b == "mpmath":
            return mpmath.fsum(self.f(ri, ti) for ri, ti in zip(r, _mp(target)))
        return self.ops.sum(self.f(r, target))[..., 0]


class _CrossEntropyKernels:
    r"""$\mathcal L=-\sum_kp_k\log\psi_k(\beta)$ for a normalized link $\psi=h/(c+\sum k)$.

    Evaluated with the link's proven shift law (:class:`LinkKernels`): $\log\psi_k=\log h(\beta'_k)-\log Z'$
    and $\partial_j\mathcal L=-p_j\,(h'/h)(\beta'_j)+(\sum_kp_k)\,k'(\beta'_j)/Z'$ (both invariant under the shift).
    """

    def __init__(self, rhs):
        psi = rhs._loss_def.link
        self.b = rhs.backend
        self.ops = rhs._ops
        self.kern = link_kernels(psi, self.b)
        gen = lambda e: lambdify_checked([_x], e, backend=self.b)
        self.logh = gen(sp.expand_log(sp.log(psi.h(_x)), force=True))
        self.dlogh = gen(sp.simplify(psi.dh(_x) / psi.h(_x)))

    def grad(self, beta, target, X=None):
        phi, w, (bs, Z) = self.kern.parts(beta)
        wk = w[1] if isinstance(w, tuple) else w
        if self.b == "mpmath":
            target = _mp(target)
            total = mpmath.fsum(target)
            return [total * wkj - pj * self.dlogh(bj) for wkj, pj, bj in zip(wk, target, bs)]
        return self.ops.sum(target) * wk - target * self.dlogh(bs)

    def value(self, beta, target, X=None):
        _, _, (bs, Z) = self.kern.parts(beta)
        if self.b == "mpmath":
            lz = mpmath.log(Z)
            return -mpmath.fsum(t * (self.logh(bj) - lz) for t, bj in zip(_mp(target), bs))
        # log Z' through log1p where Z' is close to k(0): the loss of a nearly one-hot softmax keeps its digits
        return -self.ops.sum(target * (self.logh(bs) - self.kern.log_normalizer(beta)))[..., 0]


class _GeneralKernels:
    r"""Any scalar $\mathcal L(\beta,t)$: value and SymPy gradient lambdified per output size $d$."""

    def __init__(self, rhs):
        self.loss = rhs._loss_def
        self.b = rhs.backend
        self._cache = {}

    def _fns(self, d, m):
        key = (d, m)
        if key not in self._cache:
            bs = sp.Matrix([sp.Symbol(f"b_{k}", real=True) for k in range(d)])
            ts = sp.Matrix([sp.Symbol(f"t_{k}", real=True) for k in range(m)])
            L = self.loss.value(bs, ts)
            args = list(bs) + list(ts)
            self._cache[key] = (lambdify_checked(args, L, backend=self.b),
                                [lambdify_checked(args, sp.diff(L, bk), backend=self.b) for bk in bs])
        return self._cache[key]

    def _args(self, beta, target):
        if self.b == "mpmath":
            return list(beta) + _mp(target), len(beta), len(target)
        return [beta[..., k] for k in range(beta.shape[-1])] + [target[..., k] for k in range(target.shape[-1])], \
            beta.shape[-1], target.shape[-1]

    def grad(self, beta, target, X=None):
        args, d, m = self._args(beta, target)
        gs = [g(*args) for g in self._fns(d, m)[1]]
        if self.b == "mpmath":
            return gs
        return np.stack(gs, axis=-1) if self.b == "numpy" else __import__("torch").stack(gs, dim=-1)

    def value(self, beta, target, X=None):
        args, d, m = self._args(beta, target)
        return self._fns(d, m)[0](*args)


_LOSS_KERNELS = {"margin": _MarginKernels, "separable": _SeparableKernels, "cross_entropy": _CrossEntropyKernels,
                 "general": _GeneralKernels}


@lru_cache(maxsize=None)
def flow_rhs(loss, link="softmax", *, backend: str = "numpy", frozen: tuple = ()) -> FlowRHS:
    """The generated :class:`FlowRHS` for ``loss`` and ``link`` (names or definitions) on ``backend`` (cached).

    ``frozen``: a canonical spec of :attr:`numerics.Problem.frozen`; those entries of the flow are 0.
    """
    return FlowRHS(loss, link, backend, tuple(frozen))
