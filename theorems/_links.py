r"""Links $\varphi:\mathbb R^n\to\mathbb R^n$ that turn logits $a$ into weights: one public definition.

A link is given by scalar SymPy expressions, never by a name:

* **normalized** (default): $\varphi_i(a)=h(a_i)/Z$, $Z=c+\sum_j k(a_j)$, with $k=h$ and
  $c=0$ unless given (softmax: $h=\exp$; softmax-off-by-one: $h=\exp$, $c=1$; relu-norm
  $\max(x,0)$; l1-norm $|x|$; l2-norm $x^2$; sum-norm $x$);
* **elementwise** (``normalized=False``): $\varphi_i(a)=h(a_i)$ (sigmoid).

>>> import sympy as sp
>>> x = sp.Symbol("x", real=True)
>>> Link("softmax1", h=sp.exp(x), c=1)                       # doctest: +SKIP
>>> Link("gate", h=(1 + sp.tanh(x)) / 2, normalized=False)   # doctest: +SKIP

Everything the engines use is *derived* from $h$, $k$, $c$: the derivatives $h'$, $k'$
(by SymPy), the structured Jacobian

.. math:: J_\varphi(a)=\frac{1}{Z}\big(\operatorname{diag}(h'(a))-\varphi(a)\,k'(a)^\top\big)

(softmax: $\operatorname{diag}(s)-ss^\top$; proven equal to the component-wise derivative by
the identity ``jacobian.structured``), smoothness (read off the expression: ``Piecewise``,
``Abs``, ``Max``, ... are not smooth) and the shift law
$h(x+t)=g(t)\,h(x)$, $k(x+t)=g(t)\,k(x)$ (proven by :func:`theorems.prove_zero`; it gives the
numerically safe evaluation $\varphi_i(a)=h(a_i-m)/(c/g(m)+\sum_jk(a_j-m))$ with
$m=\max_ia_i$, and *shift invariance* $\varphi(a+t\mathbf 1)=\varphi(a)$ when moreover
$c=0$).

Built-ins: the paper's six (:data:`BUILTIN_LINKS`), the sink normalizations softmax1, stablemax and
softpick (:data:`SINK_BUILTIN_LINKS`) and Scalable-Softmax ``ssmax-n<N>`` (:func:`ssmax`: its scale
$\log N$ depends on the number of tokens, so $N$ is part of the name).

The registry (:mod:`theorems._models`) maps names to definitions for the CLI; a name is a
label, never a switch.
"""
from __future__ import annotations

import math
import re
import sys
from functools import cached_property
from itertools import product

import sympy as sp

from .errors import InvalidArgument, check_int, show
from ._functions import sigmoid
from .proof import prove_zero

_x = sp.Symbol("x", real=True)
_t = sp.Symbol("t", real=True)
_y = sp.Symbol("y", real=True)

#: SymPy node types that make an expression non-smooth (a kink, a jump or a branch).
NONSMOOTH_TYPES = (sp.Piecewise, sp.Abs, sp.Max, sp.Min, sp.sign, sp.Heaviside, sp.floor, sp.ceiling,
                   sp.frac, sp.Mod, sp.re, sp.im, sp.DiracDelta)

_LINK_FIELDS = frozenset({"name", "normalized", "expr_h", "expr_k", "c", "provenance", "latex"})  # read-only

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]{0,63}$")


def check_name(kind: str, name) -> str:
    """A definition's name: a short identifier (letters, digits, ``_.+-``, starting with a letter)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidArgument(f"{kind} name: got {show(name)}; expected a string of letters, digits and _.+- "
                              "starting with a letter (at most 64 characters)")
    return name


#: where :func:`check_real` evaluates an expression SymPy's assumptions cannot decide: rationals that avoid the
#: integers and half-integers (the poles of gamma, tan, ...), on both sides of 0
PROBE_POINTS = tuple(sp.Rational(p, 10) for p in (-37, -13, -7, -1, 3, 11, 27, 53))


def _not_real_at(expr, point: dict):
    """The value of ``expr`` at ``point`` if it is provably not real (finite, non-zero imaginary part), else None."""
    v = expr.xreplace(point)
    if v.is_extended_real:
        return None
    if v.is_extended_real is False and v.is_finite:
        return v
    try:
        num = sp.N(v, 40)
        re, im = num.as_real_imag()
        re, im = sp.N(re, 40), sp.N(im, 40)
    except Exception:  # an expression that cannot be evaluated there is no evidence either way
        return None
    if not (im.is_Number and re.is_Number) or not (im.is_finite and re.is_finite):
        return None
    return v if abs(im) > sp.Float(10) ** -30 * (1 + abs(re)) else None


def check_real(argument: str, expr: sp.Expr, variables) -> sp.Expr:
    """``expr`` if it is a real scalar for all real values of ``variables``, as far as can be decided; else raise.

    A matrix is refused. Real-valuedness is decided by SymPy's assumptions (the variables are real): provably real
    (``is_extended_real``) is accepted, provably non-real is refused; an expression the assumptions cannot decide
    (``exp(I x) + exp(-I x)``, ``sqrt(x)``, ``gamma(x)``, ``Piecewise``) is evaluated exactly (40 digits) at
    :data:`PROBE_POINTS` (each variable, the others at 3/10) and refused, with the point, where its imaginary part
    is non-zero; one that is real at every probe point is accepted (its values elsewhere are not decided: the
    engines' finiteness checks still apply along a trajectory).
    """
    if getattr(expr, "is_Matrix", False) or isinstance(expr, sp.MatrixBase):
        shape = "x".join(map(str, expr.shape))
        text = "Matrix(" + sp.sstr(expr.tolist()) + ")"  # one line (a Matrix's repr spans several)
        text = text if len(text) <= 80 else text[:77] + "..."
        raise InvalidArgument(f"{argument}: {text} is a {shape} matrix; expected a real scalar expression "
                              "of one real variable")
    if not isinstance(expr, sp.Expr):
        raise InvalidArgument(f"{argument}: got {show(expr)}; expected a real scalar expression of one real variable")
    if expr.is_extended_real:
        return expr
    variables = [v for v in variables if v in expr.free_symbols]
    points = [{}] if not variables else [
        {w: (p if w == v else sp.Rational(3, 10)) for w in variables} for v in variables for p in PROBE_POINTS]
    for point in points:
        bad = _not_real_at(expr, point)
        if bad is not None:
            where = ", ".join(f"{w} = {p}" for w, p in point.items())
            at = f" at {where}" if where else ""
            raise InvalidArgument(f"{argument}: {show(expr)} is not real{at} (value {sp.N(bad, 6)}); expected a real "
                                  "scalar expression of one real variable")
    return expr


def scalar_expr(argument: str, value, var: sp.Symbol, *, allow_constant: bool = False) -> sp.Expr:
    """``value`` (a SymPy expression in at most one free symbol, a ``Lambda`` of one variable, or a
    SymPy function such as ``sp.exp``) as an expression in ``var``, real for real ``var`` (:func:`check_real`).

    Raises ``InvalidArgument`` for a string (definitions are expressions, never parsed text), a matrix, two or
    more free symbols, a constant where a function is expected, or a provably non-real or non-finite constant or
    expression.
    """
    if isinstance(value, str):
        raise InvalidArgument(f"{argument}: got the string {show(value)}; expected a SymPy expression "
                              "(e.g. sympy.exp(x)) or a sympy.Lambda")
    if isinstance(value, sp.Lambda):
        if len(value.variables) != 1:
            raise InvalidArgument(f"{argument}: got a Lambda of {len(value.variables)} variables; expected one")
        expr = value(var)
    elif isinstance(value, type) and issubclass(value, sp.Function):
        expr = value(var)
    else:
        try:
            expr = sp.sympify(value, strict=True)
        except (sp.SympifyError, TypeError) as e:
            raise InvalidArgument(f"{argument}: got {show(value)}; expected a SymPy expression") from e
        if getattr(expr, "is_Matrix", False):
            check_real(argument, expr, ())  # refused, with its shape
        if not isinstance(expr, sp.Expr):
            raise InvalidArgument(f"{argument}: got {show(value)}; expected a SymPy expression")
        free = sorted(expr.free_symbols, key=str)
        if len(free) > 1:
            raise InvalidArgument(f"{argument}: {show(expr)} has {len(free)} free symbols "
                                  f"({', '.join(map(str, free))}); expected one (the scalar variable)")
        if free:
            expr = expr.xreplace({free[0]: var})
    if getattr(expr, "is_Matrix", False) or not isinstance(expr, sp.Expr):  # a Lambda or function returned one
        check_real(argument, expr, ())
    if expr.free_symbols - {var}:
        raise InvalidArgument(f"{argument}: {show(expr)} has free symbols besides the variable")
    if var not in expr.free_symbols:
        if not allow_constant:
            raise InvalidArgument(f"{argument}: {show(expr)} is a constant; expected a function of one variable")
        if not (expr.is_real and expr.is_finite):
            raise InvalidArgument(f"{argument}: {show(expr)} is not a finite real constant")
    return check_real(argument, expr, (var,))


#: float64's range, as exact rationals (largest finite, smallest subnormal): a normalizer constant outside it
#: would be read as inf or 0 by the float64 engines.
_FLOAT64_MAX = sp.Rational(*sys.float_info.max.as_integer_ratio())
_FLOAT64_TINY = sp.Rational(1, 2**1074)


def exact_constant(argument: str, value, expected: str = "a finite real number") -> sp.Expr:
    """``value`` (a number or a constant SymPy expression) as an exact SymPy constant.

    A float (Python, NumPy or ``sp.Float``) is taken at its exact binary value (``sp.Rational(float)``:
    ``1e-100`` stays positive, ``1.000000000001`` is not 1, ``0.333333333333`` is not 1/3), as floats are
    everywhere in the package; never rounded to a "nice" number. Raises ``InvalidArgument`` (naming ``argument``,
    the value and ``expected``) for a string, a bool, a non-finite float or value, free symbols, or a value SymPy
    cannot show to be real and finite.
    """
    bad = InvalidArgument(f"{argument}={show(value)}; expected {expected}")
    if isinstance(value, (str, bool)):
        raise bad
    if isinstance(value, float):
        if not math.isfinite(value):
            raise bad
        value = sp.Rational(*float(value).as_integer_ratio())
    try:
        out = sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError, ValueError) as e:
        raise bad from e
    if not isinstance(out, sp.Expr) or getattr(out, "is_Matrix", False) or out.free_symbols:
        raise bad
    floats = out.atoms(sp.Float)
    if any(not f.is_finite for f in floats):
        raise bad
    out = out.xreplace({f: sp.Rational(f) for f in floats})
    if not (out.is_real and out.is_finite):
        raise bad
    return out


def is_smooth(expr) -> bool:
    """Whether ``expr`` contains no non-smooth node (:data:`NONSMOOTH_TYPES`); read off the expression."""
    return not sp.sympify(expr).has(*NONSMOOTH_TYPES)


#: Attributes a subclass may not override: the engines use the definition (h, k, c, normalized) and what
#: is derived from it, so an overridden ``phi`` would be ignored by every engine.
_SEALED_LINK = frozenset({"h", "k", "c", "normalized", "dh", "dk", "phi", "jacobian", "jacobian_structured",
                          "normalizer", "smooth", "shift_factor", "shift_invariant", "same_definition",
                          "key", "expr_h", "expr_k"})


class Link:
    r"""A link $\varphi$ from scalar generators (see the module docstring).

    Args:
        name: the label used by the CLI and in reports.
        h: numerator generator $h$: a SymPy expression in one free symbol (any name and
            assumptions), a ``Lambda``, or a SymPy function (``sp.exp``).
        k: normalizer generator (default ``h``); normalized links only; may be a constant.
        c: the normalizer's constant (default 0), a finite real number (a float at its exact binary value);
            normalized links only.
        normalized: $\varphi_i=h(a_i)/(c+\sum_jk(a_j))$ (default) or $\varphi_i=h(a_i)$.
        latex: the definition for reports (default: printed from the expressions).
        provenance: provenance tag of the definition (``U``: user-defined; built-ins ``P``/``C``).

    Attributes (derived, never declared): ``dh``, ``dk`` ($h'$, $k'$ as ``Lambda``), ``smooth``,
    ``shift_factor`` ($g$ with $h(x+t)=g(t)h(x)$, $k(x+t)=g(t)k(x)$, proven; ``None`` if not
    proven), ``shift_invariant`` (``shift_factor`` exists and $c=0$, or $g\equiv1$).

    The generators are stored as expressions in one real symbol ``x`` (a user symbol is replaced
    by it; simplifications SymPy made under the user's assumptions stay).

    Raises:
        InvalidArgument: a bad name, an expression with two free symbols or a string, ``k``/``c``
            with ``normalized=False``, a non-finite ``c``, a subclass overriding a derived method.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        bad = sorted(_SEALED_LINK & set(vars(cls)))
        if bad:
            raise InvalidArgument(
                f"Link subclass {cls.__name__} overrides {', '.join(bad)}: the engines compute from the definition "
                "(h, k, c, normalized) only, so an override would be ignored; define the link by its expressions "
                "instead, e.g. Link(name, h=..., c=...)")

    def __init__(self, name: str, h=None, *, k=None, c=0, normalized: bool = True, latex: str | None = None,
                 provenance: str = "U"):
        check_name("link", name)
        if h is None:
            raise InvalidArgument(f"link {name!r}: h is required (a SymPy expression in one variable)")
        if not isinstance(normalized, bool):
            raise InvalidArgument(f"link {name!r}: normalized={show(normalized)}; expected True or False")
        hx = scalar_expr(f"link {name!r}: h", h, _x)
        if normalized:
            kx = hx if k is None else scalar_expr(f"link {name!r}: k", k, _x, allow_constant=True)
            cc = exact_constant(f"link {name!r}: c", c)
            if cc != 0 and not _FLOAT64_TINY <= abs(cc) <= _FLOAT64_MAX:   # the float64 engines would read inf or 0
                raise InvalidArgument(f"link {name!r}: c = {'-' if cc < 0 else ''}about 10**"
                                      f"{int(sp.floor(sp.log(abs(cc), 10)))}; expected 0 or a magnitude within "
                                      "float64's range [4.9e-324, 1.8e308] (the engines evaluate it)")
        else:
            if k is not None or c != 0:
                raise InvalidArgument(f"link {name!r}: k and c define a normalizer; an elementwise link "
                                      "(normalized=False) has none")
            kx, cc = None, sp.Integer(0)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "normalized", normalized)
        object.__setattr__(self, "expr_h", hx)
        object.__setattr__(self, "expr_k", kx)
        object.__setattr__(self, "c", cc)
        object.__setattr__(self, "provenance", provenance)
        object.__setattr__(self, "latex", latex if latex is not None else self._default_latex())

    def __setattr__(self, key, value):
        if key in _LINK_FIELDS and key in self.__dict__:
            raise AttributeError(f"Link.{key} is read-only (a definition does not change)")
        object.__setattr__(self, key, value)

    # ---- identity --------------------------------------------------------------------------
    @cached_property
    def key(self) -> tuple:
        """The definition (no name, no latex): two links with equal keys compute the same thing."""
        return ("link", self.normalized, sp.srepr(self.expr_h), sp.srepr(self.expr_k), sp.srepr(self.c))

    def same_definition(self, other) -> bool:
        """Whether ``other`` is a link with the same definition (structurally equal expressions)."""
        return isinstance(other, Link) and self.key == other.key

    def __eq__(self, other):
        return isinstance(other, Link) and (self.name, self.key) == (other.name, other.key)

    def __hash__(self):
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.name, self.key))
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self):
        if not self.normalized:
            return f"Link({self.name!r}, h={self.expr_h}, normalized=False)"
        extra = "" if self.expr_k == self.expr_h else f", k={self.expr_k}"
        extra += "" if self.c == 0 else f", c={self.c}"
        return f"Link({self.name!r}, h={self.expr_h}{extra})"

    def __reduce__(self):
        return (_rebuild_link, (self.name, self.expr_h, self.expr_k, self.c, self.normalized, self.latex,
                                self.provenance))

    def _default_latex(self) -> str:
        hi = sp.latex(self.expr_h.xreplace({_x: sp.Symbol("a_i", real=True)}))
        if not self.normalized:
            return r"\varphi_i(a)=" + hi + r"\ \text{(elementwise)}"
        kj = sp.latex(self.expr_k.xreplace({_x: sp.Symbol("a_j", real=True)}))
        c = "" if self.c == 0 else sp.latex(self.c) + "+"
        return r"\varphi_i(a)=\frac{" + hi + "}{" + c + r"\sum_j " + kj + "}"

    # ---- the definition as Lambdas -----------------------------------------------------------
    @property
    def h(self) -> sp.Lambda:
        """$h$ as ``Lambda(x, ...)``."""
        return sp.Lambda(_x, self.expr_h)

    @property
    def k(self) -> sp.Lambda | None:
        """$k$ as ``Lambda(x, ...)`` (``None`` for an elementwise link)."""
        return None if self.expr_k is None else sp.Lambda(_x, self.expr_k)

    @cached_property
    def dh(self) -> sp.Lambda:
        """$h'$, derived by differentiating ``h``."""
        return sp.Lambda(_x, sp.diff(self.expr_h, _x))

    @cached_property
    def dk(self) -> sp.Lambda | None:
        """$k'$, derived by differentiating ``k``."""
        return None if self.expr_k is None else sp.Lambda(_x, sp.diff(self.expr_k, _x))

    @cached_property
    def k_is_h(self) -> bool:
        """$k=h$ (structurally): the Jacobian weights of $h'$ and $k'$ coincide."""
        return self.expr_k == self.expr_h

    @cached_property
    def smooth(self) -> bool:
        """Whether $h$ and $k$ have no non-smooth node (``Piecewise``, ``Abs``, ``Max``, ...)."""
        return is_smooth(self.expr_h) and (self.expr_k is None or is_smooth(self.expr_k))

    @cached_property
    def shift_factor(self) -> sp.Lambda | None:
        r"""$g$ with $h(x+t)=g(t)h(x)$ and $k(x+t)=g(t)k(x)$ for all real $x,t$, *proven*; else ``None``.

        $g(t)=h(t)/h(0)$ is the only candidate; the two identities are decided by
        :func:`theorems.prove_zero` (``proved`` only, a spot check is not enough). Non-smooth
        generators are not tried.
        """
        if not self.normalized or not self.smooth:
            return None
        h0 = self.expr_h.xreplace({_x: 0})
        if h0 == 0 or not h0.is_finite:
            return None
        g = sp.simplify(self.expr_h.xreplace({_x: _t}) / h0)
        eqs = [self.expr_h.xreplace({_x: _x + _t}) - g * self.expr_h,
               self.expr_k.xreplace({_x: _x + _t}) - g * self.expr_k]
        if prove_zero(eqs, try_simplify=True).status != "proved":
            return None
        return sp.Lambda(_t, g)

    @cached_property
    def shift_invariant(self) -> bool:
        r"""$\varphi(a+t\mathbf 1)=\varphi(a)$: a proven :attr:`shift_factor` and $c=0$ (or $g\equiv1$)."""
        g = self.shift_factor
        return g is not None and (self.c == 0 or sp.simplify(g(_t) - 1) == 0)

    # ---- symbolic evaluation -------------------------------------------------------------------
    def normalizer(self, a) -> sp.Expr | None:
        """$Z=c+\\sum_jk(a_j)$ (``None`` for an elementwise link)."""
        if not self.normalized:
            return None
        return self.c + sp.Add(*[self.expr_k.xreplace({_x: aj}) for aj in a])

    def phi(self, a: sp.Matrix) -> sp.Matrix:
        """$\\varphi(a)$ as an explicit ``n x 1`` matrix."""
        hs = [self.expr_h.xreplace({_x: ai}) for ai in a]
        if not self.normalized:
            return sp.Matrix(hs)
        Z = self.normalizer(a)
        return sp.Matrix([hi / Z for hi in hs])

    def jacobian(self, a: sp.Matrix) -> sp.Matrix:
        """$\\partial\\varphi_i/\\partial a_j$, differentiated component by component."""
        phi = self.phi(a)
        n = len(a)
        return sp.Matrix(n, n, lambda i, j: sp.diff(phi[i], a[j]))

    def jacobian_structured(self, a: sp.Matrix) -> sp.Matrix:
        """The structured Jacobian $(\\operatorname{diag}(h')-\\varphi k'^\\top)/Z$ (or $\\operatorname{diag}(h')$)."""
        dh = sp.Matrix([self.dh(ai) for ai in a])
        if not self.normalized:
            return sp.diag(*dh)
        dk = sp.Matrix([self.dk(ai) for ai in a])
        return (sp.diag(*dh) - self.phi(a) * dk.T) / self.normalizer(a)


def _rebuild_link(name, h, k, c, normalized, latex, provenance):
    """Unpickling: the built-in object for a built-in, else the definition, registered (a worker process knows
    the user links its tasks carry)."""
    if normalized:
        out = Link(name, h, k=k, c=c, normalized=True, latex=latex, provenance=provenance)
    else:
        out = Link(name, h, normalized=False, latex=latex, provenance=provenance)
    return out if _CANONICAL is None else _CANONICAL(out)


#: set by the registry (:mod:`theorems._models`) when it loads: maps an unpickled definition to the
#: built-in object or registers it (kept as a hook so that this module never imports the registry)
_CANONICAL = None


#: The paper's six links (built-ins; a user link may not take these names).
BUILTIN_LINKS: tuple[Link, ...] = (
    Link("softmax", h=sp.exp(_x), latex=r"\varphi_i(a)=\frac{e^{a_i}}{\sum_j e^{a_j}}", provenance="P"),
    Link("sigmoid", h=sigmoid(_x), normalized=False,
         latex=r"\varphi_i(a)=\frac{1}{1+e^{-a_i}}\ \text{(elementwise, unnormalized)}", provenance="C"),
    Link("relu-norm", h=sp.Max(_x, 0), latex=r"\varphi_i(a)=\frac{\max(a_i,0)}{\sum_j\max(a_j,0)}", provenance="C"),
    Link("l1-norm", h=sp.Abs(_x), latex=r"\varphi_i(a)=\frac{|a_i|}{\sum_j|a_j|}", provenance="C"),
    Link("l2-norm", h=_x**2, latex=r"\varphi_i(a)=\frac{a_i^2}{\sum_j a_j^2}", provenance="C"),
    Link("sum-norm", h=_x, latex=r"\varphi_i(a)=\frac{a_i}{\sum_j a_j}", provenance="C"),
)


# ---- built-ins beyond the paper: normalizations proposed as fixes for attention sinks [D] ----------
# (the sources define the normalizations; everything derived about them is this project's, see
# theorems.sinks and the docs page "Sinks beyond the paper")
SOFTMAX1 = Link("softmax1", h=sp.exp(_x), c=1, provenance="D",
                latex=r"\varphi_i(a)=\frac{e^{a_i}}{1+\sum_j e^{a_j}}")
STABLEMAX = Link("stablemax", h=sp.Piecewise((_x + 1, _x >= 0), (1 / (1 - _x), True)), provenance="D",
                 latex=r"\varphi_i(a)=\frac{s(a_i)}{\sum_j s(a_j)},\ s(x)=\begin{cases}x+1&x\ge0\\"
                       r"\frac{1}{1-x}&x<0\end{cases}")
#: softpick's epsilon (the source's default order of magnitude; a normalizer that never vanishes)
SOFTPICK_EPS = sp.Rational(1, 10**6)
SOFTPICK = Link("softpick", h=sp.Max(sp.exp(_x) - 1, 0), k=sp.Abs(sp.exp(_x) - 1), c=SOFTPICK_EPS, provenance="D",
                latex=r"\varphi_i(a)=\frac{\max(e^{a_i}-1,0)}{\varepsilon+\sum_j|e^{a_j}-1|}")

#: The normalizations beyond the paper that are built-in names (a user link may not take these names
#: with another definition). Scalable-Softmax is a family, one link per number of tokens: :func:`ssmax`.
SINK_BUILTIN_LINKS: tuple[Link, ...] = (SOFTMAX1, STABLEMAX, SOFTPICK)

#: The built-in names of Scalable-Softmax: ``ssmax-n<N>`` is softmax of $\log(N)\,a$ (scale $\sigma=1$), for an
#: integer ``N >= 2`` written without leading zeros. The scale depends on the number of tokens, so the number is
#: part of the name: a name means one definition, whatever problem it is used on (``ssmax-n4`` on 3 tokens is
#: softmax at the scale log 4, as claim NORMS runs it).
SSMAX_NAME = re.compile(r"^ssmax-n([1-9][0-9]{0,8})$")
#: how the family is shown in lists of names and in error messages
SSMAX_PATTERN = "ssmax-n<N>"

_SSMAX_CACHE: dict = {}


def ssmax(n: int, scale=1) -> Link:
    r"""Scalable-Softmax (arXiv 2501.19399) for ``n`` tokens: softmax of $\sigma\log(n)\,a$ ($\sigma$ = ``scale``,
    exact; a float at its exact binary value). ``ssmax(n)`` (``scale=1``) is the built-in ``ssmax-n<n>``: one object
    per ``n`` (cached); another scale is a definition of its own, named ``ssmax-n<n>-s<scale>`` (``1_2`` for 1/2; a
    double whose exact value is long by its shortest ``repr``, ``1e-300``; not a built-in; registered when used)."""
    n = check_int("n", n, minimum=2, maximum=10**9 - 1)
    s = exact_constant("scale", scale, "a positive real number")
    if not s.is_positive:
        raise InvalidArgument(f"scale={show(scale)}; expected a positive real number")
    key = (n, s)
    out = _SSMAX_CACHE.get(key)
    if out is None:
        c = s * sp.log(n)
        tag = str(s).replace("/", "_")
        if len(tag) > 24 and s.is_Rational and sp.Rational(*float(s).as_integer_ratio()) == s:
            tag = repr(float(s))  # a double with a long exact value (1e-300): its shortest repr names it, one-to-one
        if not _NAME.match(f"ssmax-n{n}-s{tag}"):
            raise InvalidArgument(f"scale={show(scale)}: its exact value {tag[:40]}... cannot name a link; expected a "
                                  "float or a rational with a short numerator and denominator")
        out = Link(f"ssmax-n{n}" + ("" if s == 1 else f"-s{tag}"), h=sp.exp(c * _x),
                   provenance="D",
                   latex=rf"\varphi_i(a)=\frac{{e^{{{sp.latex(c)}\,a_i}}}}{{\sum_j e^{{{sp.latex(c)}\,a_j}}}}")
        _SSMAX_CACHE[key] = out
    return out


def builtin_family_link(name: str) -> Link | None:
    """The built-in link of a family name (``ssmax-n<N>``, N >= 2), or ``None`` for any other name."""
    m = SSMAX_NAME.match(name) if isinstance(name, str) else None
    if m is None or int(m.group(1)) < 2:
        return None
    return ssmax(int(m.group(1)))


# ---- non-smooth links: the smooth pieces and case-split proofs -------------------------------------------
def _node_args(node):
    """The scalar expressions whose sign changes decide a non-smooth node's branch (None: not supported)."""
    if isinstance(node, (sp.Abs, sp.sign, sp.Heaviside)):
        return [node.args[0]]
    if isinstance(node, (sp.Max, sp.Min)):
        a = node.args
        return [a[i] - a[j] for i in range(len(a)) for j in range(i + 1, len(a))]
    if isinstance(node, sp.Piecewise):
        out = []
        for _e, cond in node.args:
            if cond in (sp.true, sp.false):
                continue
            rels = cond.atoms(sp.Rel)
            if not rels or any(not isinstance(r, (sp.StrictGreaterThan, sp.GreaterThan, sp.StrictLessThan,
                                                  sp.LessThan)) for r in rels):
                return None
            out.extend(r.lhs - r.rhs for r in rels)
        return out
    return None


def _sign_at(expr, point) -> int:
    v = sp.sympify(expr).xreplace({_x: point})
    if v.is_positive:
        return 1
    if v.is_negative:
        return -1
    if v.is_zero:
        return 0
    f = sp.N(v, 60)
    if not f.is_real:
        raise ValueError(f"{v} is not real")
    return 0 if abs(f) < sp.Float("1e-50") else (1 if f > 0 else -1)


def _resolve(expr, point):
    """``expr`` with every non-smooth node replaced by its branch at ``point`` (an interior point of a piece)."""
    def branch(node):
        args = [branch(a) for a in node.args] if node.args else []
        node = node.func(*args) if args and not isinstance(node, sp.Piecewise) else node
        if isinstance(node, sp.Abs):
            return _sign_at(node.args[0], point) * node.args[0]
        if isinstance(node, sp.sign):
            return sp.Integer(_sign_at(node.args[0], point))
        if isinstance(node, sp.Heaviside):
            return sp.Integer(1 if _sign_at(node.args[0], point) > 0 else 0)
        if isinstance(node, (sp.Max, sp.Min)):
            pick = max if isinstance(node, sp.Max) else min
            vals = [sp.N(a.xreplace({_x: point}), 60) for a in node.args]
            return node.args[vals.index(pick(vals))]
        if isinstance(node, sp.Piecewise):
            for e, cond in node.args:
                if cond == sp.true or bool(cond.xreplace({_x: point})):
                    return branch(e)
            raise ValueError(f"no branch of {node} holds at x = {point}")
        return node
    return branch(sp.sympify(expr))


def smooth_pieces(link: Link):
    r"""The smooth pieces of a non-smooth link, derived from its expressions [D].

    The kinks are the real zeros of the arguments that decide the non-smooth nodes (``Abs``, ``sign``,
    ``Heaviside``: the argument; ``Max``/``Min``: the differences of two arguments; ``Piecewise``: the two sides of
    each condition), found by ``solveset`` over the reals; between two consecutive kinks every such argument keeps
    its sign, so each node has one branch there, read off at an interior point. Returns a list of
    ``(lo, hi, pieces)`` (``lo``/``hi`` SymPy numbers or $\mp\infty$), ``pieces`` a dict of the smooth ``h``, ``k``
    and of the link's own derivatives ``dh``, ``dk`` (what the engines evaluate) on that interval; ``None`` when the
    kinks cannot be derived (a node type not listed, or not finitely many kinks). A smooth link is one piece.
    """
    exprs = [link.expr_h] + ([] if link.expr_k is None else [link.expr_k])
    derived = [link.dh(_x)] + ([] if link.dk is None else [link.dk(_x)])
    kinks = set()
    for e in exprs + derived:
        for node in sp.preorder_traversal(e):
            if not isinstance(node, NONSMOOTH_TYPES):
                continue
            args = _node_args(node)
            if args is None:
                return None
            for a in args:
                if _x not in a.free_symbols:
                    continue
                sol = sp.solveset(a, _x, sp.S.Reals)
                if not isinstance(sol, sp.FiniteSet):
                    return None
                kinks |= set(sol)
    pts = sorted(kinks, key=lambda v: float(v))
    edges = [-sp.oo, *pts, sp.oo]
    out = []
    for lo, hi in zip(edges, edges[1:]):
        point = (lo + hi) / 2 if lo.is_finite and hi.is_finite else (hi - 1 if lo == -sp.oo and hi.is_finite
                                                                     else lo + 1 if lo.is_finite else sp.Integer(0))
        pieces = {"h": _resolve(link.expr_h, point), "dh": _resolve(derived[0], point)}
        if link.expr_k is not None:
            pieces.update(k=_resolve(link.expr_k, point), dk=_resolve(derived[1], point))
        out.append((lo, hi, pieces))
    return out


def case_split_proofs(link: Link, n: int, *, planted: bool = False):
    r"""Case-split proofs of the structured Jacobian for a (non-smooth) normalized link at ``n`` tokens [D].

    On every product of pieces (each $a_i$ in one interval of :func:`smooth_pieces`) two exact statements,
    decided by :func:`theorems.prove_zero`: the link's own $h'$, $k'$ (SymPy's derivatives of the non-smooth
    expressions, which the engines evaluate) equal the derivatives of the smooth pieces; and the structured
    Jacobian $(\operatorname{diag}h'-\varphi k'^\top)/Z$ equals the component-wise derivative of $\varphi$ built
    from the pieces. ``planted=True`` drops the $-\varphi k'^\top$ term (the negative control: it must be
    disproved on some piece). Returns ``{"proofs": [(label, ProofResult)], "undefined": [products of pieces
    where the normalizer is identically 0, so the link is not defined]}``. The kinks themselves (a measure-zero
    set where the derivative jumps or has a corner) are not covered.
    """
    n = check_int("n", n, minimum=1, maximum=6)
    if not link.normalized:
        raise InvalidArgument(f"link {link.name!r} is elementwise; expected a normalized link")
    pieces = smooth_pieces(link)
    if pieces is None:
        raise InvalidArgument(f"link {link.name!r}: its kinks cannot be derived (a node type without a rule, or "
                              "infinitely many); expected Abs, sign, Heaviside, Max, Min or Piecewise of "
                              "inequalities with finitely many real kinks")
    out = []
    for lo, hi, p in pieces:  # the engines' derivatives are the pieces' derivatives on each interval
        for g in ("h", "k"):
            label = f"{link.name}: d{g} on ({lo}, {hi})"
            out.append((label, prove_zero(p["d" + g] - sp.diff(p[g], _x))))
    a = sp.Matrix(sp.symbols(f"a1:{n + 1}", real=True))
    undefined = []
    for combo in product(range(len(pieces)), repeat=n):
        ps = [pieces[c][2] for c in combo]
        hs = [p["h"].xreplace({_x: ai}) for p, ai in zip(ps, a)]
        ks = [p["k"].xreplace({_x: ai}) for p, ai in zip(ps, a)]
        Z = link.c + sp.Add(*ks)
        where = " x ".join(f"({pieces[c][0]}, {pieces[c][1]})" for c in combo)
        if sp.simplify(Z) == 0:  # e.g. relu-norm with every a_i < 0: the link is not defined there
            undefined.append(where)
            continue
        phi = sp.Matrix([hi / Z for hi in hs])
        J = phi.jacobian(a)
        dh = sp.diag(*[p["dh"].xreplace({_x: ai}) for p, ai in zip(ps, a)])
        dk = sp.Matrix([p["dk"].xreplace({_x: ai}) for p, ai in zip(ps, a)])
        S = (dh - (0 if planted else 1) * phi * dk.T) / Z
        out.append((f"{link.name}: jacobian.structured n={n} on {where}", prove_zero(J - S)))
    return {"proofs": out, "undefined": undefined}
