r"""Links $\varphi:\mathbb R^n\to\mathbb R^n$ that turn logits $a$ into weights.

Every link in the paper's comparison (digest §5.2) has one of two shapes, built
from a scalar *generator* $h$:

* **normalized**: $\varphi_i(a)=h(a_i)/Z$, $Z=\sum_j h(a_j)$
  (softmax: $h=\exp$; relu-norm: $h=\max(x,0)$; l1-norm: $|x|$; l2-norm: $x^2$;
  sum-norm: $x$);
* **elementwise**: $\varphi_i(a)=h(a_i)$ (sigmoid, unnormalized).

The Jacobian is obtained by differentiating each component
(:meth:`Link.jacobian`, never SymPy matrix calculus) and the structured form

.. math:: J_\varphi(a)=\frac{1}{Z}\big(\operatorname{diag}(h'(a))-\varphi(a)\,h'(a)^\top\big)

(for softmax $=\operatorname{diag}(s)-ss^\top$) is *proven* equal to it by the
identities in :mod:`theorems._identities`. :mod:`numerics` evaluates the
structured form, which is size-generic.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from ._errors import check_choice
from ._functions import sigmoid

_x = sp.Symbol("x", real=True)


@dataclass(frozen=True)
class Link:
    """A link $\\varphi$ given by its scalar generator ``h`` (a ``sympy.Lambda``).

    Attributes:
        name: the CLI name (``softmax``, ``sigmoid``, ``relu-norm``, ...).
        h: scalar generator, ``Lambda(x, ...)``.
        normalized: whether $\\varphi_i=h(a_i)/\\sum_j h(a_j)$ (else $h(a_i)$).
        shift_invariant: whether $\\varphi(a+c\\mathbf 1)=\\varphi(a)$; true for
            softmax only. Proven by the identity ``shift_invariance.softmax``;
            numerics uses it to subtract $\\max_i a_i$ before evaluating $h$.
        latex: the definition, for reports.
        provenance: digest tag of the definition (``C``: authors' code).
    """

    name: str
    h: sp.Lambda
    normalized: bool
    shift_invariant: bool
    latex: str
    provenance: str = "C"

    @cached_property
    def dh(self) -> sp.Lambda:
        """$h'$, derived by differentiating ``h``."""
        return sp.Lambda(_x, sp.diff(self.h(_x), _x))

    def phi(self, a: sp.Matrix) -> sp.Matrix:
        """$\\varphi(a)$ as an explicit ``n x 1`` matrix."""
        hs = [self.h(ai) for ai in a]
        if not self.normalized:
            return sp.Matrix(hs)
        Z = sp.Add(*hs)
        return sp.Matrix([hi / Z for hi in hs])

    def jacobian(self, a: sp.Matrix) -> sp.Matrix:
        """$\\partial\\varphi_i/\\partial a_j$, differentiated component by component."""
        phi = self.phi(a)
        n = len(a)
        return sp.Matrix(n, n, lambda i, j: sp.diff(phi[i], a[j]))

    def jacobian_structured(self, a: sp.Matrix) -> sp.Matrix:
        """The structured Jacobian $(\\operatorname{diag}(h')-\\varphi h'^\\top)/Z$ (or $\\operatorname{diag}(h')$)."""
        dh = sp.Matrix([self.dh(ai) for ai in a])
        if not self.normalized:
            return sp.diag(*dh)
        Z = sp.Add(*[self.h(ai) for ai in a])
        return (sp.diag(*dh) - self.phi(a) * dh.T) / Z


def _relu(x):
    return sp.Max(x, 0)


LINKS: dict[str, Link] = {
    link.name: link
    for link in (
        Link("softmax", sp.Lambda(_x, sp.exp(_x)), True, True,
             r"\varphi_i(a)=\frac{e^{a_i}}{\sum_j e^{a_j}}", "P"),
        Link("sigmoid", sp.Lambda(_x, sigmoid(_x)), False, False,
             r"\varphi_i(a)=\frac{1}{1+e^{-a_i}}\ \text{(elementwise, unnormalized)}"),
        Link("relu-norm", sp.Lambda(_x, _relu(_x)), True, False,
             r"\varphi_i(a)=\frac{\max(a_i,0)}{\sum_j\max(a_j,0)}"),
        Link("l1-norm", sp.Lambda(_x, sp.Abs(_x)), True, False,
             r"\varphi_i(a)=\frac{|a_i|}{\sum_j|a_j|}"),
        Link("l2-norm", sp.Lambda(_x, _x**2), True, False,
             r"\varphi_i(a)=\frac{a_i^2}{\sum_j a_j^2}"),
        Link("sum-norm", sp.Lambda(_x, _x), True, False,
             r"\varphi_i(a)=\frac{a_i}{\sum_j a_j}"),
    )
}


def get_link(name: str) -> Link:
    """Return the link called ``name``; raise ``InvalidArgument`` for an unknown name."""
    check_choice("link", name, LINKS)
    return LINKS[name]
