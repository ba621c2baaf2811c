r"""The one wrapper around ``sympy.lambdify`` used by softpolar.

``lambdify_checked(args, expr, backend=...)`` fixes the argument order, turns on
common-subexpression elimination, maps the named functions of
:mod:`theorems` (``softplus``, ``sigmoid``, ``Max``) to overflow-free
implementations of each backend, and broadcasts constant results to the shape
of the first argument (``lambdify`` returns a bare ``1`` for $h(x)=x$, $h'=1$).

Pitfalls handled here (see SymPy's lambdify docs):

* SymPy 1.14's torch printer rejects user functions and maps ``Max`` to
  ``torch.max`` (a reduction, wrong elementwise): we print ``Max`` as
  ``torch.maximum`` and the named functions by name.
* ``log(1+exp(x))`` overflows for ``x > 709`` in float64: ``softplus`` becomes
  ``logaddexp(0, x)``; ``sigmoid`` becomes ``expit`` / ``torch.sigmoid``.
"""
from __future__ import annotations

from functools import lru_cache
import math

import mpmath
import numpy as np
import scipy.special
import sympy as sp
from sympy.printing.numpy import SciPyPrinter
from sympy.printing.pycode import MpmathPrinter

from theorems import InvalidArgument, check_choice

#: Backends a generated function can target.
BACKENDS = ("numpy", "torch", "mpmath")


def _np_softplus(x):
    return np.logaddexp(0.0, x)


def _mp_softplus(x):
    x = mpmath.mpf(x)
    if x > 0:
        return x + mpmath.log1p(mpmath.exp(-x))
    return mpmath.log1p(mpmath.exp(x))


def _mp_sigmoid(x):
    x = mpmath.mpf(x)
    if x >= 0:
        return 1 / (1 + mpmath.exp(-x))
    e = mpmath.exp(x)
    return e / (1 + e)


_MP_HALF = mpmath.mpf(1) / 2  # Heaviside(0), exact in binary


def _mp_heaviside(x, h0=_MP_HALF):
    return mpmath.mpf(0) if x < 0 else (h0 if x == 0 else mpmath.mpf(1))


class _NamedFunctionsMixin:
    def _print_softplus(self, e):
        return f"softplus({self._print(e.args[0])})"

    def _print_sigmoid(self, e):
        return f"sigmoid({self._print(e.args[0])})"


class _NumpyPrinter(_NamedFunctionsMixin, SciPyPrinter):
    """NumPy with ``scipy.special`` for the special functions NumPy lacks (``erf``, ``gamma``, ``loggamma``, ...)."""


class _MpmathPrinter(_NamedFunctionsMixin, MpmathPrinter):
    def _print_Max(self, e):
        return "max(%s)" % ", ".join(self._print(a) for a in e.args)


def _torch_printer():
    from sympy.printing.pytorch import TorchPrinter

    class _TorchPrinter(_NamedFunctionsMixin, TorchPrinter):
        def _print_Max(self, e):
            args = [self._print(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = f"maximum_({out}, {a})"
            return out

        def _print_Heaviside(self, e):
            return f"heaviside_({self._print(e.args[0])})"

    return _TorchPrinter


def _namespace(backend: str) -> dict:
    if backend == "numpy":
        return {"softplus": _np_softplus, "sigmoid": scipy.special.expit}
    if backend == "mpmath":
        return {"softplus": _mp_softplus, "sigmoid": _mp_sigmoid, "heaviside": _mp_heaviside}
    import torch

    def maximum_(x, y):
        if not torch.is_tensor(x):
            x, y = y, x
        if not torch.is_tensor(y):
            return torch.clamp(x, min=y)
        return torch.maximum(x, y)

    def heaviside_(x):
        return torch.heaviside(x, torch.full_like(x, 0.5))

    return {
        "softplus": lambda x: torch.logaddexp(x, torch.zeros_like(x)),
        "sigmoid": torch.sigmoid,
        "maximum_": maximum_,
        "heaviside_": heaviside_,
    }


def _check_functions(expr, printer, fn, backend: str) -> None:
    """Every function of ``expr`` that the printer does not know (printed by name, ``allow_unknown_functions``)
    must be a function of the generated code's namespace that ``backend`` evaluates elementwise: for the array
    backends, not a scalar-only function of ``math`` / ``mpmath`` (which raise on arrays, as ``math.erf`` did).
    Otherwise ``InvalidArgument`` naming the function and the backend. (A known function the backend's module
    lacks fails at ``lambdify`` itself: see the caller.)"""
    ns = fn.__globals__
    for f in sorted({type(e) for e in expr.atoms(sp.Function)}, key=lambda c: c.__name__):
        name = f.__name__
        own = [c for c in f.__mro__ if issubclass(c, sp.Function) and c.__module__ != "sympy.core.function"]
        if name in printer.known_functions or any(hasattr(printer, f"_print_{c.__name__}") for c in own):
            continue  # printed by the printer's own rule for it (the generic sympy.core.function classes excepted)
        obj = ns.get(name)
        ok = callable(obj) and (backend == "mpmath" or not (obj is getattr(math, name, None)
                                                             or obj is getattr(mpmath, name, None)))
        if not ok:
            raise InvalidArgument(
                f"function {name} cannot be evaluated by the {backend} backend (no elementwise {backend} "
                f"implementation of it); expected a definition with functions {backend} provides, or another "
                f"backend (mpmath evaluates most special functions)")


def lambdify_checked(args, expr, *, backend: str):
    """Lambdify ``expr`` in ``args`` (fixed order) for ``backend`` with CSE.

    Array backends return arrays of the broadcast shape of the inputs, also when
    ``expr`` is a constant. Raises ``InvalidArgument`` for an unknown backend.
    """
    check_choice("backend", backend, BACKENDS)
    return _lambdify_cached(tuple(args), sp.sympify(expr), backend)


@lru_cache(maxsize=None)
def _lambdify_cached(args, expr, backend):
    if backend == "numpy":
        printer = _NumpyPrinter({"fully_qualified_modules": False, "inline": True,
                                 "allow_unknown_functions": True, "user_functions": {}})
        modules = [_namespace("numpy"), "scipy", "numpy"]
    elif backend == "mpmath":
        printer = _MpmathPrinter({"fully_qualified_modules": False, "inline": True,
                                  "allow_unknown_functions": True, "user_functions": {}})
        modules = [_namespace("mpmath"), "mpmath"]
    else:
        printer = _torch_printer()({"fully_qualified_modules": False, "inline": True,
                                    "allow_unknown_functions": True, "user_functions": {}})
        modules = [_namespace("torch"), "torch"]
        # torch's elementwise functions take tensors only: a constant such as log(4) or sqrt(2) (a
        # definition's scale, e.g. Scalable-Softmax) is printed as torch.log(4) and fails; evaluate such
        # constants once, to 25 digits (rounded to the tensor's dtype on use)
        expr = expr.replace(lambda e: isinstance(e, (sp.Function, sp.Pow)) and e.is_number and not e.is_Number,
                            lambda e: sp.Float(e.evalf(25), 25))
    try:
        fn = sp.lambdify(args, expr, modules=modules, printer=printer, cse=True)
    except (AttributeError, ImportError, NameError, NotImplementedError) as exc:  # a function the backend lacks
        names = ", ".join(sorted({type(e).__name__ for e in expr.atoms(sp.Function)}))
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidArgument(f"the {backend} backend cannot evaluate {expr} (functions {names}: {why}); expected "
                              "a definition with functions this backend provides, or another backend (mpmath "
                              "evaluates most special functions)") from None
    _check_functions(expr, printer, fn, backend)
    if expr.free_symbols:
        return fn
    if backend == "mpmath":
        value = sp.nsimplify(expr)
        if not value.is_Rational:
            return fn

        def const_fn(*xs, _p=int(value.p), _q=int(value.q)):
            return mpmath.mpf(_p) / _q

        return const_fn

    def broadcast(*xs, _fn=fn):
        return xs[0] * 0 + _fn(*xs)

    return broadcast
