r"""The value-softmax model $F(V,a)=\mathcal L(V\varphi(a))$ with explicit symbols.

:class:`SymbolicModel` holds $V\in\mathbb R^{d\times n}$, $a\in\mathbb R^n$, the target
and (square loss) the design $X$ as explicit matrices of scalar symbols, and
derives the gradient flow

.. math:: \dot V_{kl}=-\frac{\partial F}{\partial V_{kl}},\qquad \dot a_i=-\frac{\partial F}{\partial a_i}

by differentiating the scalar objective with respect to each scalar symbol
(paper Eqs. (3)-(4) [A]). SymPy's matrix calculus is deliberately avoided: in
SymPy 1.14 ``diff((b.T*V*s)[0,0], V)`` silently returns 0.

:meth:`SymbolicModel.flow_structured` is the structured form
$\dot V=-g\varphi^\top$, $\dot a=-J_\varphi^\top V^\top g$ with $g=\nabla\mathcal L(\beta)$,
which the identities prove equal to :meth:`SymbolicModel.flow`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from .errors import InvalidArgument, check_choice, check_int
from ._links import Link
from ._models import get_link
from ._losses import Loss
from ._models import get_loss


def _dot(x, y):
    return sp.Add(*[xi * yi for xi, yi in zip(x, y)])


@dataclass(frozen=True)
class SymbolicModel:
    """Symbols and derived flow of $\\mathcal L(V\\varphi(a))$ for fixed sizes.

    Args:
        loss: a loss name (built-in or registered) or a :class:`theorems.Loss`.
        link: a link name (built-in or registered) or a :class:`theorems.Link`.
        n: number of tokens (>= 2).
        d: output dimension (>= 1).
        design: ``identity`` (default, $X=I_d$) or ``symbolic`` (an $m\\times d$
            matrix of free symbols; square loss only).
        m: rows of a symbolic design (default ``d``).
        positive_logits: declare the logits positive (needed for the exact
            treatment of non-smooth links such as ``relu-norm``/``l1-norm``).
    """

    loss: str
    link: str
    n: int
    d: int = 1
    design: str = "identity"
    m: int | None = None
    positive_logits: bool = False
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        # a definition object is registered and stored by its name (hashable, and what reports print)
        object.__setattr__(self, "loss", get_loss(self.loss).name)
        object.__setattr__(self, "link", get_link(self.link).name)
        check_int("n", self.n, minimum=2)
        check_int("d", self.d, minimum=1)
        check_choice("design", self.design, {"identity", "symbolic"})
        if self.design == "symbolic" and not self.loss_def.design:
            raise InvalidArgument(
                f"design={self.design!r} with loss={self.loss!r}: a design matrix exists only for a separable loss "
                "(e.g. 'square')"
            )

    # ---- symbols -------------------------------------------------------------------
    @property
    def loss_def(self) -> Loss:
        return get_loss(self.loss)

    @property
    def link_def(self) -> Link:
        return get_link(self.link)

    @cached_property
    def V(self) -> sp.Matrix:
        return sp.Matrix(self.d, self.n, lambda k, j: sp.Symbol(f"V_{k + 1}_{j + 1}", real=True))

    @cached_property
    def a(self) -> sp.Matrix:
        kw = {"positive": True} if self.positive_logits else {"real": True}
        return sp.Matrix([sp.Symbol(f"a_{i + 1}", **kw) for i in range(self.n)])

    @cached_property
    def target(self) -> sp.Matrix:
        name = self.loss_def.target_name
        kw = {"positive": True} if self.loss_def.target_positive else {"real": True}
        size = self.d
        if self.design == "symbolic":
            size = self.m or self.d
        return sp.Matrix([sp.Symbol(f"{name}_{k + 1}", **kw) for k in range(size)])

    @cached_property
    def X(self) -> sp.Matrix | None:
        if not self.loss_def.design:
            return None
        if self.design == "identity":
            return sp.eye(self.d)
        rows = self.m or self.d
        return sp.Matrix(rows, self.d, lambda i, k: sp.Symbol(f"X_{i + 1}_{k + 1}", real=True))

    # ---- model ---------------------------------------------------------------------
    @cached_property
    def phi(self) -> sp.Matrix:
        return self.link_def.phi(self.a)

    @cached_property
    def beta(self) -> sp.Matrix:
        return self.V * self.phi

    @cached_property
    def objective(self):
        """$F(V,a)=\\mathcal L(V\\varphi(a))$."""
        return self.loss_def.value(self.beta, self.target, self.X)

    @cached_property
    def grad_loss(self) -> sp.Matrix:
        """$g=\\nabla\\mathcal L(\\beta)$ in structured form, evaluated at $\\beta=V\\varphi(a)$."""
        return self.loss_def.gradient_structured(self.beta, self.target, self.X)

    @cached_property
    def jacobian(self) -> sp.Matrix:
        return self.link_def.jacobian(self.a)

    def flow(self) -> tuple[sp.Matrix, sp.Matrix]:
        """$(\\dot V,\\dot a)$ derived by scalar differentiation of the objective."""
        if "flow" not in self._cache:
            F = self.objective
            dV = sp.Matrix(self.d, self.n, lambda k, j: -sp.diff(F, self.V[k, j]))
            da = sp.Matrix([-sp.diff(F, ai) for ai in self.a])
            self._cache["flow"] = (dV, da)
        return self._cache["flow"]

    def flow_structured(self) -> tuple[sp.Matrix, sp.Matrix]:
        """$(-g\\varphi^\\top,\\,-J_\\varphi^\\top V^\\top g)$ with the structured Jacobian."""
        g = self.grad_loss
        J = self.link_def.jacobian_structured(self.a)
        return -g * self.phi.T, -J.T * self.V.T * g

    def time_derivative(self, expr) -> sp.Expr:
        """$\\frac{d}{dt}\\,\\mathrm{expr}(V,a)$ along the derived flow (chain rule, scalar by scalar)."""
        dV, da = self.flow()
        out = sp.Add(*[sp.diff(expr, self.V[k, j]) * dV[k, j] for k in range(self.d) for j in range(self.n)])
        return out + sp.Add(*[sp.diff(expr, ai) * dai for ai, dai in zip(self.a, da)])

    def dot(self, x, y):
        return _dot(x, y)
