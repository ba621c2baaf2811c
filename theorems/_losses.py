r"""Losses $\mathcal L(\beta)$ of the output $\beta=V\varphi(a)\in\mathbb R^d$ (digest §1.2).

* ``logistic``: $\mathcal L=\ell(\langle w,\beta\rangle)$, $\ell(z)=\log(1+e^{-z})=\operatorname{softplus}(-z)$,
  target direction $w$ (the paper's $\beta^*$);
* ``square``: $\mathcal L=\tfrac12\|X\beta-y\|^2$, design $X$ ($m\times d$, default $I_d$);
* ``kl``: $\mathcal L=-\sum_k p_k\log\operatorname{softmax}(\beta)_k$ (cross-entropy against a
  distribution $p$; equals $\mathrm{KL}(p\,\|\,\operatorname{softmax}\beta)+H(p)$ when $\sum p=1$).

:meth:`Loss.gradient` differentiates the definition component by component.
:meth:`Loss.gradient_structured` is the closed vector form used by numerics
($\ell'(z)\,w$; $X^\top(X\beta-y)$; $(\sum_k p_k)\operatorname{softmax}(\beta)-p$), proven equal to
the component-wise derivative by the identity ``loss.gradient``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from ._errors import check_choice
from ._functions import softplus

_z = sp.Symbol("z", real=True)


def _dot(x: sp.Matrix, y: sp.Matrix):
    return sp.Add(*[xi * yi for xi, yi in zip(x, y)])


@dataclass(frozen=True)
class Loss:
    """A loss of the output; ``target_name`` is ``w`` (logistic), ``y`` (square) or ``p`` (kl)."""

    name: str
    target_name: str
    latex: str
    provenance: str

    @cached_property
    def ell(self) -> sp.Lambda | None:
        """Margin loss $\\ell(z)$ for margin-type losses (logistic), else ``None``."""
        if self.name == "logistic":
            return sp.Lambda(_z, softplus(-_z))
        return None

    @cached_property
    def dell(self) -> sp.Lambda | None:
        """$\\ell'(z)$, derived by differentiating :attr:`ell`."""
        if self.ell is None:
            return None
        return sp.Lambda(_z, sp.diff(self.ell(_z), _z))

    def value(self, beta: sp.Matrix, target: sp.Matrix, X: sp.Matrix | None = None):
        """$\\mathcal L(\\beta)$ from its definition."""
        if self.name == "logistic":
            return self.ell(_dot(target, beta))
        if self.name == "square":
            X = sp.eye(len(beta)) if X is None else X
            r = X * beta - target
            return _dot(r, r) / 2
        lse = sp.log(sp.Add(*[sp.exp(bk) for bk in beta]))
        return -sp.Add(*[pk * (bk - lse) for pk, bk in zip(target, beta)])

    def gradient(self, beta_symbols: sp.Matrix, target, X=None) -> sp.Matrix:
        """$\\nabla\\mathcal L$ at a point of free symbols, differentiated component by component."""
        L = self.value(beta_symbols, target, X)
        return sp.Matrix([sp.diff(L, b) for b in beta_symbols])

    def gradient_structured(self, beta: sp.Matrix, target: sp.Matrix, X: sp.Matrix | None = None) -> sp.Matrix:
        """The closed vector form of $\\nabla\\mathcal L(\\beta)$ (see module docstring)."""
        if self.name == "logistic":
            return self.dell(_dot(target, beta)) * target
        if self.name == "square":
            X = sp.eye(len(beta)) if X is None else X
            return X.T * (X * beta - target)
        Z = sp.Add(*[sp.exp(bk) for bk in beta])
        total = sp.Add(*target)
        return sp.Matrix([total * sp.exp(bk) / Z - pk for bk, pk in zip(beta, target)])


LOSSES: dict[str, Loss] = {
    loss.name: loss
    for loss in (
        Loss("logistic", "w", r"\mathcal L(\beta)=\log\left(1+e^{-\langle w,\beta\rangle}\right)", "C"),
        Loss("square", "y", r"\mathcal L(\beta)=\tfrac12\|X\beta-y\|^2", "C"),
        Loss("kl", "p", r"\mathcal L(\beta)=-\sum_k p_k\log\operatorname{softmax}(\beta)_k", "C"),
    )
}


def get_loss(name: str) -> Loss:
    """Return the loss called ``name``; raise ``InvalidArgument`` for an unknown name."""
    check_choice("loss", name, LOSSES)
    return LOSSES[name]
