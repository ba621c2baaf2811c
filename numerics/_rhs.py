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

from dataclasses import dataclass
from functools import cached_property, lru_cache

import mpmath
import numpy as np
import sympy as sp

from theorems import InvalidArgument, get_link, get_loss

from ._lambdify import BACKENDS, lambdify_checked
from theorems import check_choice

_x = sp.Symbol("x", real=True)
_z = sp.Symbol("z", real=True)


# ----------------------------------------------------------------------------------------
# array adapters: the same template runs on numpy and torch
class _NumpyOps:
    name = "numpy"

    # ndarray methods, not np.max / np.sum: the module-level wrappers cost ~1 us each,
    # a quarter of one RHS call at n = 8 (bit-identical results).
    @staticmethod
    def amax(x):
        return x.max(axis=-1, keepdims=True)

    @staticmethod
    def sum(x):
        return x.sum(axis=-1, keepdims=True)

    @staticmethod
    def mT(x):
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def logaddexp0(x):
        return np.logaddexp(0.0, x)


class _TorchOps:
    name = "torch"

    @staticmethod
    def amax(x):
        return x.amax(dim=-1, keepdim=True)

    @staticmethod
    def sum(x):
        return x.sum(dim=-1, keepdim=True)

    @staticmethod
    def mT(x):
        return x.transpose(-1, -2)


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

    def __post_init__(self):
        get_loss(self.loss)
        get_link(self.link)
        check_choice("backend", self.backend, BACKENDS)

    # ---- generated kernels -------------------------------------------------------------
    @cached_property
    def _h(self):
        return lambdify_checked([_x], get_link(self.link).h(_x), backend=self.backend)

    @cached_property
    def _dh(self):
        return lambdify_checked([_x], get_link(self.link).dh(_x), backend=self.backend)

    @cached_property
    def _ell(self):
        loss = get_loss(self.loss)
        return None if loss.ell is None else lambdify_checked([_z], loss.ell(_z), backend=self.backend)

    @cached_property
    def _dell(self):
        loss = get_loss(self.loss)
        return None if loss.dell is None else lambdify_checked([_z], loss.dell(_z), backend=self.backend)

    @cached_property
    def _link_def(self):
        return get_link(self.link)

    @cached_property
    def _dh_is_h(self) -> bool:
        """$h'=h$ (softmax's exp): the weights of $J^\\top$ reuse $h(a)$ instead of recomputing it."""
        link = self._link_def
        return sp.simplify(link.dh(_x) - link.h(_x)) == 0

    @cached_property
    def _ops(self):
        return _NumpyOps if self.backend == "numpy" else _TorchOps

    # ---- link ------------------------------------------------------------------------
    def link_parts(self, a):
        """``(phi, w)``: $\\varphi(a)$ and the Jacobian weights, $J_\\varphi^\\top x = w\\odot(x-\\langle\\varphi,x\\rangle)$ (normalized) or $w\\odot x$.

        Shapes as ``a``: ``(..., n)`` arrays, or lists of ``n`` ``mpf`` (see the class docstring).
        """
        link = self._link_def
        if self.backend == "mpmath":
            a = [mpmath.mpf(ai) for ai in a]
            if link.shift_invariant:
                m = max(a)
                a = [ai - m for ai in a]
            H = [self._h(ai) for ai in a]
            W = H if self._dh_is_h else [self._dh(ai) for ai in a]
            if not link.normalized:
                return H, W
            Z = mpmath.fsum(H)
            return [hi / Z for hi in H], [wi / Z for wi in W]
        ops = self._ops
        if link.shift_invariant:
            a = a - ops.amax(a)
        H = self._h(a)
        W = H if self._dh_is_h else self._dh(a)
        if not link.normalized:
            return H, W
        Z = ops.sum(H)
        return H / Z, W / Z

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
            return [wi * (xi - m) for wi, xi in zip(w, x)]
        if not normalized:
            return w * x
        return w * (x - self._ops.sum(phi * x))

    # ---- loss ------------------------------------------------------------------------
    def grad_loss(self, beta, target, X=None):
        """$\\nabla\\mathcal L(\\beta)$ in structured form."""
        if self.backend == "mpmath":
            return self._grad_loss_mp(beta, target, X)
        ops = self._ops
        if self.loss == "logistic":
            z = ops.sum(target * beta)
            return self._dell(z) * target
        if self.loss == "square":
            if X is None:
                return beta - target
            r = (X @ beta[..., None])[..., 0] - target
            return (ops.mT(X) @ r[..., None])[..., 0]
        q = beta - ops.amax(beta)
        q = np.exp(q) if self.backend == "numpy" else q.exp()
        q = q / ops.sum(q)
        return ops.sum(target) * q - target

    def _grad_loss_mp(self, beta, target, X):
        target = [mpmath.mpf(t) for t in target]
        if self.loss == "logistic":
            c = self._dell(mpmath.fdot(target, beta))
            return [c * t for t in target]
        if self.loss == "square":
            if X is None:
                return [b - t for b, t in zip(beta, target)]
            r = [mpmath.fdot(row, beta) - t for row, t in zip(X, target)]
            return [mpmath.fdot([X[i][k] for i in range(len(X))], r) for k in range(len(beta))]
        m = max(beta)
        e = [mpmath.exp(b - m) for b in beta]
        Z = mpmath.fsum(e)
        total = mpmath.fsum(target)
        return [total * ei / Z - t for ei, t in zip(e, target)]

    def loss_value(self, V, a, target, X=None):
        """$\\mathcal L(V\\varphi(a))$."""
        beta = self.output(V, a)
        if self.backend == "mpmath":
            target = [mpmath.mpf(t) for t in target]
            if self.loss == "logistic":
                return self._ell(mpmath.fdot(target, beta))
            if self.loss == "square":
                r = [b - t for b, t in zip(beta, target)] if X is None else \
                    [mpmath.fdot(row, beta) - t for row, t in zip(X, target)]
                return mpmath.fdot(r, r) / 2
            m = max(beta)
            lse = m + mpmath.log(mpmath.fsum(mpmath.exp(b - m) for b in beta))
            return -mpmath.fsum(t * (b - lse) for t, b in zip(target, beta))
        ops = self._ops
        if self.loss == "logistic":
            return self._ell(ops.sum(target * beta))[..., 0]
        if self.loss == "square":
            r = beta - target if X is None else (X @ beta[..., None])[..., 0] - target
            return 0.5 * ops.sum(r * r)[..., 0]
        m = ops.amax(beta)
        ex = np.exp(beta - m) if self.backend == "numpy" else (beta - m).exp()
        lse = m + (np.log(ops.sum(ex)) if self.backend == "numpy" else ops.sum(ex).log())
        return -ops.sum(target * (beta - lse))[..., 0]

    # ---- model -----------------------------------------------------------------------
    def output(self, V, a):
        """$\\beta=V\\varphi(a)$."""
        phi = self.phi(a)
        if self.backend == "mpmath":
            return [mpmath.fdot([mpmath.mpf(v) for v in row], phi) for row in V]
        return (V @ phi[..., None])[..., 0]

    def __call__(self, V, a, target, X=None):
        """Return ``(dV, da)`` at ``(V, a)``."""
        phi, w = self.link_parts(a)
        if self.backend == "mpmath":
            V = [[mpmath.mpf(v) for v in row] for row in V]
            beta = [mpmath.fdot(row, phi) for row in V]
            g = self._grad_loss_mp(beta, target, X)
            dV = [[-gk * pj for pj in phi] for gk in g]
            f = [-mpmath.fdot([V[k][j] for k in range(len(V))], g) for j in range(len(phi))]
            return dV, self.apply_jT(phi, w, f)
        beta = (V @ phi[..., None])[..., 0]
        g = self.grad_loss(beta, target, X)
        if self.backend == "numpy":
            # einsum writes the outer product g phi^T 1.7-3x faster than the broadcast
            # multiply (bit-identical; measured by `softpolar bench --rows 1`)
            dV = np.einsum("...i,...j->...ij", -g, phi)
        else:
            dV = -g[..., :, None] * phi[..., None, :]
        f = -(g[..., None, :] @ V)[..., 0, :]
        return dV, self.apply_jT(phi, w, f)


@lru_cache(maxsize=None)
def flow_rhs(loss: str, link: str = "softmax", *, backend: str = "numpy") -> FlowRHS:
    """The generated :class:`FlowRHS` for ``loss`` and ``link`` on ``backend`` (cached)."""
    return FlowRHS(loss, link, backend)
