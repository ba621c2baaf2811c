r"""Initial conditions of the flow: :class:`Problem` (JSON, seeded generation, validation).

A problem fixes the loss, the link, and the initial point $(V(0), a(0))$ with the target
(paper-notes#losses):

* ``logistic``: target $w\in\mathbb R^d$ (the paper's $\beta^*$), $\mathcal L=\ell(\langle w,V\varphi(a)\rangle)$;
* ``square``: target $y\in\mathbb R^m$ and an optional design $X\in\mathbb R^{m\times d}$
  (default $I_d$), $\mathcal L=\tfrac12\|XV\varphi(a)-y\|^2$;
* ``kl``: target $p\in\Delta_{d-1}$, $\mathcal L=-\sum_k p_k\log\operatorname{softmax}(V\varphi(a))_k$.

Arrays are float64 and read-only. **Exact inputs stay exact**: entries given as decimal
strings, :class:`decimal.Decimal` (JSON numbers read by :meth:`Problem.from_json`), integers,
:class:`fractions.Fraction` (or ``'p/q'`` strings) or ``mpmath.mpf`` are also kept as exact
rationals (:meth:`Problem.exact_values`); the mpmath backends (``simulate(backend='mpmath')``,
GD in mpmath) round them once, to their working precision (:meth:`Problem.mp_values`), and
only the float64 backends use the float64 arrays. :meth:`Problem.input_note` says which
happened (recorded in ``Trajectory.notes``, hence in ``--json``); ``to_json_dict`` writes
exact inputs back as exact decimal strings. Entries given as binary floats are exact as given.

Seeded generation (:meth:`Problem.from_seed`) draws with ``numpy.random.RandomState(seed)``
(MT19937, the stream behind the authors' ``np.random.seed``) in the authors' order
$V$, $a$, ($X$), target, so that the authors' toy settings (paper-notes#authors-settings, provenance [C])
come out draw for draw. :data:`PRESETS` / :meth:`Problem.preset` name them:

=====================  ====================================================================
preset                 authors' experiment (notebook ``visualizations/toy_experiments.ipynb``)
=====================  ====================================================================
``logistic-toy``       "Logistic loss", figure softmax_and_u_evolution: seed 123, d=n=8,
                       $V=0.1\mathcal N$, $a=0$, $w\sim\mathcal N$ normalized; GD lr 0.1, 1e6 steps
``comparison``         "Comparison of different attention types": d=n=10, target from
                       ``seed(42)`` normalized, then re-seeded 42: $V=0.1\mathcal N$,
                       $a=\mathbf 1+0.1\mathcal N$ (quirk: $V$'s first row is $0.1\times$ the
                       unnormalized target); square (lr 0.1, 5000 steps) or logistic
                       (lr 0.5, 1e5 steps), any link
``conditioning``       "Regression with different condition numbers": seed 123, d=n=m=20,
                       $V=10^{-5}\mathcal N$, $a=10^{-3}\mathcal N$, $X$ with singular values
                       ``linspace(1, 1/kappa, 20)``, $y\sim\mathcal N$; GD lr 1e-3, 3e5 steps.
                       The authors minimise $\|y-XV\sigma\|^2$ (no ½): the preset stores
                       $\sqrt2X,\sqrt2y$ so that our $\tfrac12\|\cdot\|^2$ is *their* objective
                       and lr / time mean the same.
``kl-toy``             "KL-divergence": seed 123, d=n=10, $V=0.1\mathcal N$ drawn tokens x classes
                       (our $V$ is its transpose), $a=0$, $p=\operatorname{softmax}(10\,U[0,1]^{10})$;
                       GD lr 0.1, 1e7 steps
=====================  ====================================================================

The tied model $U\sigma(Ua)$ of the same notebook is a different model and is not a preset.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction
import copy

import mpmath
import numpy as np
import sympy as sp
from mpmath.libmp import from_rational, round_nearest

from theorems import InvalidArgument, check_choice, check_int, get_link, get_loss, is_builtin, register
from theorems.errors import check_real, show

from .io import read_json
from .rhs import _FROZEN, frozen_masks, link_kernels  # the frozen-parameter spec lives with the flow it masks

_x = sp.Symbol("x", real=True)

#: initial-logit rules of :meth:`Problem.from_seed`.
A0_RULES = ("zero", "noise", "ones_noise")

#: Named presets: the authors' toy settings (paper-notes#authors-settings, provenance [C]).
#: ``lr`` and ``steps`` are the authors' GD settings (flow time ``lr * steps``).
PRESETS = {
    "logistic-toy": {"experiment": "logistic toy (softmax_and_u_evolution)", "loss": "logistic",
                     "lr": 0.1, "steps": 10**6, "digest": "§6.1 item 1"},
    "comparison": {"experiment": "normalization comparison (square_loss_comparison / "
                                 "log_loss_comparison)", "loss": ("square", "logistic"),
                   "lr": {"square": 0.1, "logistic": 0.5},
                   "steps": {"square": 5000, "logistic": 10**5}, "digest": "§5.2"},
    "conditioning": {"experiment": "conditioning regression (condition_numbers)", "loss": "square",
                     "lr": 1e-3, "steps": 3 * 10**5, "digest": "§4.3"},
    "kl-toy": {"experiment": "KL toy (kl.pdf)", "loss": "kl", "lr": 0.1, "steps": 10**7,
               "digest": "§5.1"},
}

_KEYS = ("loss", "link", "V", "a", "target", "X", "frozen")
#: tolerance on sum(p) == 1 for the kl target: float64 rounding of a d-term sum is below
#: d * 2**-52; 1e-9 also admits targets written with 10 significant digits.
_P_SUM_TOL = 1e-9


#: most entries of one array (V, X): 10**7 float64 numbers are 80 MB.
MAX_ENTRIES = 10**7
#: most numbers in one init file, all arrays together: counted on the file's bytes before it is
#: parsed (:func:`numerics.io.parse_json`), so a larger file is refused in a fraction of a second
#: without building its entries (each would be a ~100-byte exact decimal first).
MAX_FILE_NUMBERS = 10**7


def _array(argument, value, ndim):
    try:
        if np.iscomplexobj(value) or (isinstance(value, (list, tuple)) and _has_complex(value)):
            raise TypeError("complex numbers are not real")
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a {ndim}-d array "
                              f"of real numbers ({show(exc, 120)})") from None
    if arr.size > MAX_ENTRIES:
        raise InvalidArgument(f"{argument} has {arr.size} entries; expected at most {MAX_ENTRIES}")
    if arr.ndim != ndim:
        raise InvalidArgument(f"{argument} has shape {arr.shape}; expected a {ndim}-d array")
    if not np.all(np.isfinite(arr)):
        raise InvalidArgument(f"{argument} contains non-finite entries; expected finite numbers")
    arr.setflags(write=False)
    return arr


def _count_entries(value) -> int:
    """Leaves of a nested list (two levels at most are counted; deeper nesting is refused later)."""
    if isinstance(value, (list, tuple)):
        return sum(len(r) if isinstance(r, (list, tuple)) else 1 for r in value)
    return 0


def _has_complex(value, depth=0) -> bool:
    if depth > 64:
        return False
    for v in value:
        if isinstance(v, (complex, np.complexfloating)):
            return True
        if isinstance(v, (list, tuple)) and _has_complex(v, depth + 1):
            return True
    return False


#: largest |decimal exponent| of an exact input entry (a larger one would make its rational huge).
MAX_INPUT_EXPONENT = 10_000
_ARRAYS = ("V", "a", "target", "X")


def exact_entry(argument, v):
    """The exact rational of one input entry, or ``None`` for a binary float (exact as given)."""
    if isinstance(v, (bool, np.bool_)):
        raise InvalidArgument(f"{argument} contains {v!r}; expected real numbers")
    if isinstance(v, Fraction):
        return v
    if isinstance(v, (str, Decimal)):
        text = v.strip() if isinstance(v, str) else v
        if isinstance(v, str) and not text.isascii():  # Decimal/Fraction read fullwidth digits as ASCII
            raise InvalidArgument(f"{argument} contains {str(v)[:40]!r}; expected a decimal number or a "
                                  "rational 'p/q' in ASCII digits")
        try:
            dec = Decimal(text)
        except InvalidOperation:
            try:
                return Fraction(text)  # 'p/q'
            except (ValueError, ZeroDivisionError):
                raise InvalidArgument(f"{argument} contains {str(v)[:40]!r}; expected a decimal number, "
                                      "or a rational 'p/q'") from None
        if not dec.is_finite():
            raise InvalidArgument(f"{argument} contains non-finite entries; expected finite numbers")
        if dec != 0 and abs(dec.adjusted()) > MAX_INPUT_EXPONENT:
            raise InvalidArgument(f"{argument} contains {str(v)[:40]!r}; expected a decimal exponent within "
                                  f"+-{MAX_INPUT_EXPONENT}")
        return Fraction(dec)
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if type(v).__name__ == "mpf":
        if not mpmath.isfinite(v):
            raise InvalidArgument(f"{argument} contains non-finite entries; expected finite numbers")
        m, e = v.man_exp
        return Fraction(int(m)) * Fraction(2) ** int(e)
    return None


def _exact_nested(argument, value, depth=0):
    """Nested lists of Fractions when ``value`` holds an exact (non-float) entry, else ``None``."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return None
    if depth > 2 or not isinstance(value, (list, tuple, np.ndarray)):
        return None
    found = False

    def walk(x, level):
        nonlocal found
        if isinstance(x, (list, tuple, np.ndarray)) and level < 2:
            return [walk(y, level + 1) for y in x]
        q = exact_entry(argument, x)
        if q is not None:
            found = True
            return q
        if isinstance(x, (float, np.floating)) and math.isfinite(float(x)):
            return Fraction(float(x))
        return x  # left for _array to reject

    out = walk(value, 0)
    return out if found else None


def _to_float(argument, nested):
    def conv(x):
        if isinstance(x, list):
            return [conv(y) for y in x]
        if isinstance(x, Fraction):
            try:
                return float(x)  # correctly rounded
            except OverflowError:
                # decimal exponent from logarithms (str() of a 10**10000 would exceed Python's limit)
                e = math.floor(math.log10(abs(x.numerator)) - math.log10(x.denominator))
                raise InvalidArgument(f"{argument}={'-' if x < 0 else ''}~1e{e} is not allowed: non-finite in "
                                      "float64 (beyond its range); expected finite numbers") from None
        return x
    return conv(nested)


def _freeze(nested):
    return tuple(_freeze(x) for x in nested) if isinstance(nested, list) else nested


def decimal_text(q: Fraction) -> str:
    """Exact text of a rational: a decimal when it has one (denominator 2^i 5^j), else ``'p/q'``."""
    d = q.denominator
    twos = fives = 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{q.numerator}/{q.denominator}"
    with localcontext() as ctx:
        ctx.prec = len(str(abs(q.numerator))) + max(twos, fives) + 5
        text = format(Decimal(q.numerator) / Decimal(q.denominator), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def frozen_spec(frozen, n: int) -> tuple:
    """``frozen`` validated and canonical (sorted, no duplicates): ``"V"``, ``"a"``, ``"V[j]"``, ``"a[j]"``."""
    if isinstance(frozen, str):
        frozen = (frozen,)
    try:
        items = list(frozen)
    except TypeError:
        raise InvalidArgument(f"frozen={show(frozen)} is not allowed; expected a tuple of 'V', 'a', "
                              "'V[j]', 'a[j]'") from None
    out = set()
    for it in items:
        m = _FROZEN.match(it) if isinstance(it, str) else None
        if m is None:
            raise InvalidArgument(f"frozen entry {show(it)} is not allowed; expected 'V', 'a', 'V[j]' or 'a[j]' "
                                  "(token j counted from 0)")
        if m.group(2) is not None and not int(m.group(2)) < n:
            raise InvalidArgument(f"frozen entry {it!r}: token {int(m.group(2))} does not exist; expected "
                                  f"0 <= j < n = {n} (tokens are counted from 0)")
        out.add(m.group(1) if m.group(2) is None else f"{m.group(1)}[{int(m.group(2))}]")
    # an entry for every token of a block is the block itself; a token entry inside a frozen block is dropped
    for blk in ("V", "a"):
        if blk in out or all(f"{blk}[{j}]" in out for j in range(n)):
            out = {x for x in out if not x.startswith(blk + "[")} | {blk}
    return tuple(sorted(out))


@dataclass(frozen=True, eq=False)
class Problem:
    """An initial-value problem for the flow on $\\mathcal L(V\\varphi(a))$.

    Attributes:
        loss: a loss name (``logistic`` | ``square`` | ``kl`` or a registered one) or a
            :class:`theorems.Loss` (registered, and stored by its name).
        link: a link name (default ``softmax``) or a :class:`theorems.Link` (likewise).
        V: ``(d, n)`` float64, columns are the value vectors $v_i$.
        a: ``(n,)`` float64 logits.
        target: $w$ ``(d,)`` (logistic), $y$ ``(m,)`` (square), $p$ ``(d,)`` (kl, a distribution).
        X: ``(m, d)`` design for the square loss, or ``None`` ($X=I_d$).
        frozen: parameters held fixed by every engine: ``"V"`` (all values: a bandit), ``"a"``
            (all logits), ``"V[j]"`` / ``"a[j]"`` (the value vector / logit of token ``j``; tokens
            are counted from 0 in the API, on the CLI and in plots and reports). Stored canonical
            and sorted; the flow of the other parameters is unchanged.

    Validated on construction; bad input raises :class:`InvalidArgument`.
    """

    loss: str
    V: np.ndarray
    a: np.ndarray
    target: np.ndarray
    link: str = "softmax"
    X: np.ndarray | None = None
    frozen: tuple = ()

    def __post_init__(self):
        loss_def = get_loss(self.loss)
        link = get_link(self.link)
        object.__setattr__(self, "loss", loss_def.name)
        object.__setattr__(self, "link", link.name)
        exact = {}
        given = {}
        for name in _ARRAYS:
            val = getattr(self, name)
            ex = None if val is None else _exact_nested(name, val)
            exact[name] = ex
            given[name] = val if ex is None else _to_float(name, ex)
        V = _array("V", given["V"], 2)
        a = _array("a", given["a"], 1)
        target = _array("target", given["target"], 1)
        d, n = V.shape
        if d < 1 or n < 1:
            raise InvalidArgument(f"V has shape {V.shape}; expected d >= 1 rows and n >= 1 columns")
        if a.shape != (n,):
            raise InvalidArgument(f"a has shape {a.shape}; expected ({n},) to match V's {n} columns")
        X = None
        if self.X is not None:
            if not loss_def.design:
                raise InvalidArgument(f"X is given for loss={self.loss!r}; a design X is only "
                                      "allowed with a separable loss (e.g. 'square')")
            X = _array("X", given["X"], 2)
            if X.shape[1] != d or X.shape[0] < 1:
                raise InvalidArgument(f"X has shape {X.shape}; expected (m, {d}) to match V's {d} rows")
        m = X.shape[0] if X is not None else d
        if target.shape != (m,):
            what = loss_def.target_name
            raise InvalidArgument(f"target ({what}) has shape {target.shape}; expected ({m},)")
        if loss_def.target_positive:
            if np.any(target < 0) or abs(float(np.sum(target)) - 1.0) > _P_SUM_TOL:
                raise InvalidArgument(
                    f"target p={np.array2string(target, precision=4)} is not a distribution; "
                    f"expected p >= 0 with sum(p) = 1 (sum is {float(np.sum(target))!r})")
        if link.normalized:
            # the normalizer c + sum_j k(a_j) must not vanish (and the flow be finite): caught here at
            # the start, and along the way by every engine's finiteness check
            Z = self._normalizer(a)
            if not (Z != 0 and mpmath.isfinite(Z)):
                raise InvalidArgument(
                    f"a={np.array2string(a, precision=4)} gives the normalizer c + sum_j k(a_j) = {Z!r} for "
                    f"link={self.link!r}; expected a finite non-zero normalizer")
        object.__setattr__(self, "frozen", frozen_spec(self.frozen, n))
        # user definitions travel with the problem (pickled to a worker process, registered there)
        object.__setattr__(self, "_definitions", tuple(x for x in (loss_def, link) if not is_builtin(x)))
        object.__setattr__(self, "V", V)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "_exact_inputs", {k: _freeze(v) for k, v in exact.items() if v is not None})

    # ---- exact inputs ----------------------------------------------------------------
    @property
    def has_exact_inputs(self) -> bool:
        """True if some array was given with exact (non-float) entries, kept as rationals."""
        return bool(self._exact_inputs)

    def exact_values(self, name: str):
        """The exact input values of array ``name`` (``V``, ``a``, ``target``, ``X``) as nested lists of
        :class:`~fractions.Fraction` (the float64 values, exactly, when it was given as floats)."""
        check_choice("name", name, _ARRAYS)
        ex = self._exact_inputs.get(name)
        if ex is not None:
            return [list(r) if isinstance(r, tuple) else r for r in ex]
        arr = getattr(self, name)
        if arr is None:
            return None
        if arr.ndim == 2:
            return [[Fraction(x) for x in r] for r in arr.tolist()]
        return [Fraction(x) for x in arr.tolist()]

    def mp_values(self, name: str):
        """Array ``name`` as nested lists of ``mpmath.mpf``, each exact input rounded once (to nearest) to
        the current mpmath precision; float64 entries are taken exactly."""
        ex = self._exact_inputs.get(name)
        if ex is None:
            arr = getattr(self, name)
            if arr is None:
                return None
            return [[mpmath.mpf(float(v)) for v in r] for r in arr] if arr.ndim == 2 else \
                [mpmath.mpf(float(v)) for v in arr]
        prec, make = mpmath.mp.prec, mpmath.mp.make_mpf

        def conv(x):
            if isinstance(x, tuple):
                return [conv(y) for y in x]
            return make(from_rational(x.numerator, x.denominator, prec, round_nearest))
        return conv(ex)

    def float64_rounding(self) -> float:
        """Largest relative error of the float64 arrays against the exact inputs (0.0 if they are exact)."""
        worst = Fraction(0)
        for name, ex in self._exact_inputs.items():
            arr = getattr(self, name)
            flat = [q for r in ex for q in (r if isinstance(r, tuple) else (r,))]
            for q, f in zip(flat, arr.ravel().tolist()):
                if q != 0:
                    worst = max(worst, abs(Fraction(f) - q) / abs(q))
                elif f != 0:
                    worst = max(worst, Fraction(1))
        return float(worst)

    def input_note(self, backend: str) -> str:
        """One line for ``Trajectory.notes``: were the inputs exact, and where were they rounded?"""
        if not self.has_exact_inputs:
            return "inputs: float64 values (exact as given)"
        err = self.float64_rounding()
        if backend == "mpmath":
            return ("inputs: exact (decimal/rational values kept, rounded once to the mpmath working "
                    "precision; float64 rounding would have been " + (f"{err:.2g}" if err else "0") + ")")
        if err == 0:
            return "inputs: exact, and equal to their float64 values"
        return f"inputs: exact values rounded to float64 for this backend (largest relative rounding {err:.2g})"

    def _normalizer(self, a):
        """$Z=c+\\sum_jk(a_j)$ of a normalized link, from the generated link kernels (after the proven
        shift law, so the value is $Z/g(\\max a)$: zero exactly when $Z$ is)."""
        try:
            kernels = link_kernels(self.link, "numpy")
        except InvalidArgument:  # a function numpy / scipy cannot evaluate (e.g. polylog): mpmath, 30 digits
            link = get_link(self.link)
            value = sp.N(link.normalizer([sp.Float(float(x), 30) for x in a]), 30)
            if not (value.is_Number and value.is_real):
                raise InvalidArgument(f"link={self.link!r}: the normalizer c + sum_j k(a_j) at a={list(a)!r} "
                                      f"evaluates to {value}; expected a real number") from None
            return mpmath.mpf(str(value)) if value.is_finite else mpmath.inf
        with np.errstate(all="ignore"):  # a vanishing Z is what the caller tests for
            try:
                return float(kernels.parts(np.asarray(a, dtype=np.float64))[2][1][0])
            except OverflowError as exc:   # an exact constant of the definition beyond float64 (c=10**400)
                raise InvalidArgument(
                    f"link={self.link!r}: a constant of its definition does not fit float64 ({exc}); expected "
                    f"constants within float64's range (|x| <= 1.8e308)") from None

    @property
    def frozen_masks(self):
        """``(mV, ma)``: float64 ``(n,)`` multipliers (0 frozen, 1 free) for the columns of $\\dot V$ and
        for $\\dot a$, or ``None`` when nothing is frozen."""
        return frozen_masks(self.frozen, self.n)

    # ---- shapes ----------------------------------------------------------------------
    @property
    def d(self) -> int:
        """Output dimension (rows of V)."""
        return self.V.shape[0]

    @property
    def n(self) -> int:
        """Number of tokens (columns of V)."""
        return self.V.shape[1]

    # ---- JSON ------------------------------------------------------------------------
    @classmethod
    def from_json(cls, source) -> "Problem":
        """Build from a dict or a JSON file path with keys ``loss``, ``link`` (optional),
        ``V`` (d rows of n), ``a``, ``target``, ``X`` (optional, square loss only), ``frozen`` and
        ``comment`` (optional free text, ignored)."""
        if isinstance(source, (str, os.PathLike)):
            data = read_json(source, "init", parse_float=Decimal,  # numbers stay exact
                             max_numbers=MAX_FILE_NUMBERS)
        else:
            data = source
        if not isinstance(data, dict):
            raise InvalidArgument(f"init={show(data)} is not allowed; expected a JSON object (dict)")
        comment = data.get("comment")  # a free-text note, as in certify's input (examples/certify_init.json)
        if comment is not None and not isinstance(comment, str):
            raise InvalidArgument(f"init comment={show(comment)} is not allowed; expected a string")
        unknown = sorted(show(k) for k in set(data) - set(_KEYS) - {"comment"})
        if unknown:
            raise InvalidArgument(f"init has unknown keys {unknown}; expected keys among {[*_KEYS, 'comment']}")
        for name in _ARRAYS:  # entries counted before any is converted (a dict from Python, too)
            count = _count_entries(data.get(name))
            if count > MAX_ENTRIES:
                raise InvalidArgument(f"{name} has {count} entries; expected at most {MAX_ENTRIES}")
        missing = [k for k in ("loss", "V", "a", "target") if k not in data]
        if missing:
            raise InvalidArgument(f"init is missing keys {missing}; expected loss, V, a, target "
                                  "(and optionally link, X)")
        frozen = data.get("frozen", ())
        if not isinstance(frozen, (list, tuple)):
            raise InvalidArgument(f"init frozen={show(frozen)} is not allowed; expected a list such as [\"V\"]")
        return cls(loss=data["loss"], link=data.get("link", "softmax"), V=data["V"], a=data["a"],
                   target=data["target"], X=data.get("X"), frozen=tuple(frozen))

    def to_json_dict(self) -> dict:
        """A dict that :meth:`from_json` reads back to an equal problem (floats round-trip; exact
        inputs are written as exact decimal strings, or ``'p/q'``)."""
        def arr(name):
            ex = self._exact_inputs.get(name)
            if ex is None:
                return getattr(self, name).tolist()
            return [[decimal_text(q) for q in r] if isinstance(r, tuple) else decimal_text(r) for r in ex]
        out = {"loss": self.loss, "link": self.link, "V": arr("V"), "a": arr("a"), "target": arr("target")}
        if self.X is not None:
            out["X"] = arr("X")
        if self.frozen:
            out["frozen"] = list(self.frozen)
        return out

    def __setstate__(self, state):
        for k, v in state.items():
            object.__setattr__(self, k, v)
        defs = [d for d in state.get("_definitions", ()) if not is_builtin(d)]
        if defs:
            register(*defs)

    def with_frozen(self, frozen) -> "Problem":
        """A copy with the frozen parameters ``frozen`` (see the class docstring); exact inputs kept."""
        out = copy.copy(self)
        object.__setattr__(out, "frozen", frozen_spec(frozen, self.n))
        return out

    def same_as(self, other: "Problem") -> bool:
        """Exact equality of all fields (arrays compared element-wise), and of the exact inputs when
        both problems have them. A problem given as floats equals its JSON round trip: the file holds
        each float's shortest repr, read back as that exact decimal, whose float64 is the same float."""
        def eq(x, y):
            return (x is None and y is None) or (x is not None and y is not None
                                                 and x.shape == y.shape and bool(np.all(x == y)))
        return (self.loss == other.loss and self.link == other.link and eq(self.V, other.V)
                and eq(self.a, other.a) and eq(self.target, other.target) and eq(self.X, other.X)
                and (not (self.has_exact_inputs and other.has_exact_inputs)
                     or all(self.exact_values(k) == other.exact_values(k) for k in _ARRAYS)))

    # ---- seeded generation -------------------------------------------------------------
    @classmethod
    def from_seed(cls, seed: int, *, d: int, n: int, loss: str, link: str = "softmax",
                  v_scale: float = 0.1, a0: str = "zero", a_scale: float = 0.1,
                  kappa: float | None = None, m: int | None = None) -> "Problem":
        r"""Draw an initial point the way the authors' notebook does (paper-notes#authors-settings, [C]).

        With ``rs = numpy.random.RandomState(seed)`` and in this order:

        * $V$ = ``v_scale * rs.randn(d, n)``; for ``kl`` ``(v_scale * rs.randn(n, d)).T`` (the
          authors store the tokens x classes transpose);
        * $a$: ``zero`` = ``0 * rs.randn(n)`` (draws are consumed, as in the notebook),
          ``noise`` = ``a_scale * rs.randn(n)``, ``ones_noise`` = ``1 + a_scale * rs.randn(n)``;
        * square with ``kappa``: ``X = U diag(linspace(1, 1/kappa)) Vt`` from the SVD of
          ``rs.randn(m, d)`` (``m`` defaults to ``d``), then ``y = rs.randn(m)`` (unnormalized);
          square without ``kappa``: ``X = None``, ``y = rs.randn(d)`` normalized;
        * logistic: ``w = rs.randn(d)`` normalized; kl: ``p = softmax(10 * rs.rand(d))``.

        ``from_seed(123, d=8, n=8, loss='logistic')`` is the authors' logistic toy draw for draw.
        """
        seed = check_int("seed", seed, minimum=0, maximum=2**32 - 1)  # RandomState's range
        d = check_int("d", d, minimum=1, maximum=MAX_ENTRIES)
        n = check_int("n", n, minimum=1, maximum=MAX_ENTRIES)
        if d * n > MAX_ENTRIES:
            raise InvalidArgument(f"d={d}, n={n} give V {d * n} entries; expected d * n <= {MAX_ENTRIES}")
        loss_def = get_loss(loss)
        loss = loss_def.name
        check_choice("a0", a0, A0_RULES)
        v_scale = check_real("v_scale", v_scale, minimum=0.0)
        a_scale = check_real("a_scale", a_scale, minimum=0.0)
        if kappa is not None:
            if not loss_def.design:
                raise InvalidArgument(f"kappa={show(kappa)} is not allowed with loss={loss!r}; expected "
                                      "a condition number >= 1, with loss='square' only")
            kappa = check_real("kappa", kappa, minimum=1.0)
        if m is not None and kappa is None:
            raise InvalidArgument(f"m={show(m)} is only used with kappa (a square-loss design)")
        rs = np.random.RandomState(seed)
        # the draw depends on the loss's form (what its target is), never on its name
        V = v_scale * (rs.randn(n, d).T if loss_def.target_positive else rs.randn(d, n))
        if a0 == "zero":
            a = 0 * rs.randn(n)
        elif a0 == "noise":
            a = a_scale * rs.randn(n)
        else:
            a = np.ones(n) + a_scale * rs.randn(n)
        X = None
        if loss_def.form in ("margin", "general"):
            target = rs.randn(d)
            target = target / np.linalg.norm(target)
        elif loss_def.form == "separable":
            if kappa is not None:
                m = d if m is None else check_int("m", m, minimum=1, maximum=MAX_ENTRIES // d)
                U, _, Vt = np.linalg.svd(rs.randn(m, d), full_matrices=False)
                X = U @ np.diag(np.linspace(1.0, 1.0 / kappa, min(m, d))) @ Vt
                target = rs.randn(m)
            else:
                target = rs.randn(d)
                target = target / np.linalg.norm(target)
        else:
            e = np.exp(10 * rs.rand(d) - 10)
            target = e / np.sum(e)
        return cls(loss=loss, link=link, V=V, a=a, target=target, X=X)

    @classmethod
    def preset(cls, name: str, *, loss: str | None = None, link: str = "softmax",
               kappa: float | None = None) -> "Problem":
        """The authors' toy setting ``name`` (see :data:`PRESETS` and the module docstring)."""
        check_choice("preset", name, PRESETS)
        if name == "comparison":
            check_choice("loss", loss, ("square", "logistic"))
            rs = np.random.RandomState(42)
            target = rs.randn(10)
            target = target / np.linalg.norm(target)
            rs = np.random.RandomState(42)
            V = 0.1 * rs.randn(10, 10)
            a = 1.0 * (np.ones(10) + rs.randn(10) * 0.1)
            return cls(loss=loss, link=link, V=V, a=a, target=target)
        expected = PRESETS[name]["loss"]
        if loss is not None and loss != expected:
            raise InvalidArgument(f"loss={loss!r} does not fit preset {name!r}; expected {expected!r}")
        if name == "logistic-toy":
            return cls.from_seed(123, d=8, n=8, loss="logistic", link=link, v_scale=0.1, a0="zero")
        if name == "kl-toy":
            return cls.from_seed(123, d=10, n=10, loss="kl", link=link, v_scale=0.1, a0="zero")
        if kappa is None:
            raise InvalidArgument("kappa=None is not allowed for preset 'conditioning'; expected a "
                                  "condition number >= 1 (the authors use 1, 2, 3, 4, 5)")
        p = cls.from_seed(123, d=20, n=20, loss="square", link=link, v_scale=1e-5, a0="noise",
                          a_scale=1e-3, kappa=kappa)
        r2 = math.sqrt(2.0)
        return cls(loss="square", link=link, V=p.V, a=p.a, target=r2 * p.target, X=r2 * p.X)
