r"""Two named scalar functions, so that code generation can pick stable kernels.

``softplus(x)`` $=\log(1+e^{x})$ and ``sigmoid(x)`` $=1/(1+e^{-x})$ are SymPy
``Function`` subclasses. Their derivatives are given by ``fdiff`` and *checked*
against differentiation of the exp form in :func:`check_function_derivatives`
(run by ``softpolar derive --check`` and the tests), so nothing here is trusted
on faith. Keeping them named (instead of expanding to ``exp``) lets
:mod:`numerics` map them to overflow-free implementations
(``logaddexp(0, x)``, ``expit``), while proofs call ``rewrite(sp.exp)``.
"""
from __future__ import annotations

import sympy as sp


class softplus(sp.Function):  # SymPy naming convention
    r"""$\operatorname{softplus}(x)=\log(1+e^{x})$; the logistic loss is $\ell(z)=\operatorname{softplus}(-z)$."""

    nargs = 1

    def fdiff(self, argindex=1):
        return sigmoid(self.args[0])

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return sp.log(1 + sp.exp(x))

    def _eval_is_real(self):
        return self.args[0].is_real

    def _latex(self, printer, exp=None):
        out = r"\operatorname{softplus}\left(%s\right)" % printer._print(self.args[0])
        return out if exp is None else r"%s^{%s}" % (out, exp)


class sigmoid(sp.Function):
    r"""$\operatorname{sigmoid}(x)=1/(1+e^{-x})$."""

    nargs = 1

    def fdiff(self, argindex=1):
        x = self.args[0]
        return sigmoid(x) * (1 - sigmoid(x))

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return 1 / (1 + sp.exp(-x))

    def _eval_is_real(self):
        return self.args[0].is_real

    def _eval_is_positive(self):
        if self.args[0].is_real:
            return True
        return None

    def _latex(self, printer, exp=None):
        out = r"\sigma_{\mathrm{sig}}\left(%s\right)" % printer._print(self.args[0])
        return out if exp is None else r"%s^{%s}" % (out, exp)


def check_function_derivatives() -> bool:
    """Prove that the ``fdiff`` rules above equal the derivatives of the exp forms."""
    x = sp.Symbol("x", real=True)
    for f in (softplus, sigmoid):
        lhs = sp.diff(f(x), x).rewrite(sp.exp)
        rhs = sp.diff(f(x).rewrite(sp.exp), x)
        if sp.simplify(lhs - rhs) != 0:
            return False
    return True
