r"""Building blocks of the identity registry: :class:`Identity`, :class:`Case`, helpers.

An *identity* is a statement about the derived gradient flow of
$F(V,a)=\mathcal L(V\varphi(a))$ (or about one of its ingredients) that
``softpolar derive --check`` re-proves for every size $n=2..6$ it applies to,
together with a *negative control*: a deliberately wrong variant (flipped sign,
missing $ss^\top$, unsquared $J$, ...) that the very same check must reject
with status ``disproved`` (a counterexample point, never merely "undecided").
Each identity also carries a *size-generic* proof for every $n$ and $d$
(:mod:`theorems.id_generic_proofs`) with its own generic negative controls.

Every check starts from the definitions held by :class:`theorems.SymbolicModel`
(its :meth:`~theorems.SymbolicModel.flow` and
:meth:`~theorems.SymbolicModel.time_derivative`, derived scalar by scalar) and
compares with the structured or claimed form through :func:`decide` (the identity
registry's entry point of the one decision procedure in :mod:`theorems.proof`,
which :func:`theorems.prove_zero` shares).

This module holds no identities itself; the topic modules ``_id_*.py`` do, and
:mod:`theorems._identities` collects them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, NamedTuple

import sympy as sp

from ._links import Link
from ._models import LINKS, LOSSES, get_link, get_loss
from ._model import SymbolicModel
# the decision procedure lives in .proof; re-exported here for the ``_id_*`` modules and older imports
from .proof import EVAL_DIGITS, EVAL_NONZERO, ProofResult, dag_symbols, decide, exact_zero  # noqa: F401

#: Sizes re-proved by ``softpolar derive --check``.
DEFAULT_NS = (2, 3, 4, 5, 6)

#: Status order for combining the results of several cases of one identity:
#: the combined status is the worst one.
_WORST_FIRST = ("disproved", "undecided", "numeric", "proved")
#: For negative controls the order is reversed: a wrong variant that "holds" is the worst outcome.
_NEG_WORST_FIRST = ("proved", "numeric", "undecided", "disproved")

#: Scope marker: an identity whose ``losses`` (or ``links``) is ``ANY`` applies to every loss (link),
#: built-in or user-defined; enumerated without a filter, it runs on the built-ins.
ANY = ("*",)


def piecewise(link) -> bool:
    """A link whose generator is not smooth (read off its expression: ``Max``, ``Abs``, ``Piecewise``, ...):
    its identities are proven on the region $a_i>0$ (declared with ``positive_logits``)."""
    return not get_link(link).smooth


def is_softmax(link) -> bool:
    """Whether ``link`` has the definition of softmax ($h=k=e^x$, $c=0$), under any name."""
    return get_link(link).same_definition(LINKS["softmax"])


class Case(NamedTuple):
    """One concrete instance of an identity: loss, link and sizes ``n`` (tokens), ``d`` (output)."""

    loss: str
    link: str
    n: int
    d: int


def d_schedule(loss: str, n: int, link: str = "softmax") -> tuple[int, ...]:
    """Output dimensions ``d`` proven at ``n`` tokens for identities of the full $(V,a)$ flow.

    ``d = 1, 2, 3`` for ``n <= 4`` and ``d = 1, 2`` for ``n = 5, 6`` (the brief allows a
    smaller ``d`` at large ``n``: the $d=3$ cases at $n=5,6$ alone would double the
    cost of ``softpolar derive --check``). ``kl`` starts at ``d = 2``: with one class
    the cross-entropy is identically 0, a trivial case in which the negative
    controls cannot fail. ``softpolar derive --n N --d D`` proves any other size on
    demand.
    """
    ds = (1, 2, 3) if n <= 4 else (1, 2)
    return tuple(d for d in ds if d >= get_loss(loss).min_d)


def link_schedule(loss: str, n: int, link: str = "softmax") -> tuple[int, ...]:
    """Output dimensions for identities that range over *every* link.

    softmax: :func:`d_schedule`. Other links (the paper compares them under the
    logistic and square losses only): ``d = 1, 2`` for ``n <= 4`` and ``d = 1``
    for ``n = 5, 6``; with the kl loss ``d = 2`` for ``n <= 3`` only. This keeps
    ``softpolar derive --check`` within its time budget; ``softpolar derive``
    re-proves any requested (loss, link, n, d) on demand.
    """
    if is_softmax(link):
        return d_schedule(loss, n)
    if get_loss(loss).min_d >= 2:
        return (2,) if n <= 3 else ()
    return (1, 2) if n <= 4 else (1,)


@lru_cache(maxsize=256)
def model(loss: str, link: str, n: int, d: int, design: str = "identity") -> SymbolicModel:
    """A cached :class:`SymbolicModel` (its derived flow is cached inside it).

    Piecewise links get ``positive_logits=True`` (see :func:`piecewise`).
    The cache is per process, so each worker of :func:`run_identities` derives a
    flow at most once per (loss, link, n, d).
    """
    return SymbolicModel(loss, link, n, d, design=design, positive_logits=piecewise(link))


def derived_grad(m: SymbolicModel) -> sp.Matrix:
    r"""$\nabla\mathcal L(\beta)$ differentiated component by component at free symbols.

    The derivative is taken at free symbols $b_k$ and then evaluated at $\beta=V\varphi(a)$.
    """
    b = sp.Matrix([sp.Symbol(f"b_{k + 1}", real=True) for k in range(m.d)])
    g = get_loss(m.loss).gradient(b, m.target, m.X)
    return g.xreplace(dict(zip(b, m.beta)))


@lru_cache(maxsize=256)
def structured(loss: str, link: str, n: int, d: int) -> tuple[sp.Matrix, sp.Matrix]:
    """:meth:`SymbolicModel.flow_structured` of the cached :func:`model` (cached: it is used twice per case)."""
    return model(loss, link, n, d).flow_structured()


@lru_cache(maxsize=256)
def grad(loss: str, link: str, n: int, d: int, design: str = "identity") -> sp.Matrix:
    """:func:`derived_grad` of the cached :func:`model` (cached too)."""
    return derived_grad(model(loss, link, n, d, design))


def placeholders(prefix: str, size: int) -> sp.Matrix:
    """A column of plain symbols ``prefix_1..prefix_size``.

    Claimed right-hand sides are built on placeholders (cheap matrix products of
    small polynomials) and the model's expressions are substituted afterwards with
    ``xreplace``; building them directly multiplies large expressions and is slow.
    """
    return sp.Matrix([sp.Symbol(f"_{prefix}_{i + 1}", real=True) for i in range(size)])


def dot(x, y):
    """$\\langle x,y\\rangle$ of two equal-length sequences."""
    return sp.Add(*[xi * yi for xi, yi in zip(x, y)])


def combine(results: list[tuple[str, ProofResult]], *, negative: bool = False) -> ProofResult:
    """Merge labelled results of several cases into one (the worst status wins).

    For a positive check the order is disproved > undecided > numeric > proved.
    For negative controls (``negative=True``) a wrong variant that holds is the
    worst outcome: proved > numeric > undecided > disproved.
    """
    if not results:
        return ProofResult("undecided", "none", "no applicable case")
    order = _NEG_WORST_FIRST if negative else _WORST_FIRST
    worst_label, worst = min(results, key=lambda lr: order.index(lr[1].status))
    methods = "+".join(sorted({r.method for _, r in results}))
    counts = {}
    for _, r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    detail = f"{len(results)} case(s) ({summary})"
    if worst.status != order[-1]:
        detail += f"; worst case {worst_label}: {worst.detail}"
    return ProofResult(worst.status, methods, detail, dict(worst.counterexample))


CheckFn = Callable[[Case], ProofResult]
GenericFn = Callable[[], ProofResult]


@dataclass(frozen=True)
class Identity:
    r"""One identity of the symbolic layer, with its negative control(s).

    Attributes:
        id: stable identifier (``flow.structured``, ``output.dynamics``, ...).
        title: one line of prose with inline ``$...$`` LaTeX math (no ASCII pseudo-math); a
            terminal shows it through ``proofs_check.report._render.tex_plain``.
        statement: the claim in LaTeX (math mode body, no ``$``).
        provenance: provenance tag(s) (paper-notes#provenance-tags), e.g. ``"A/D"``; ``A`` = the paper per
            public reading notes,
            ``D`` = derived for this project (never presented as the paper's statement).
        note: provenance remarks (typos or sign issues in the paper, restrictions), prose with
            inline ``$...$`` math like ``title``.
        losses, links: where it applies: names (a user definition equal to a named one is in scope too),
            or :data:`ANY`.
        loss_free: the statement does not involve the loss (its cases use the first of ``losses``
            whatever loss is asked for).
        link_free: the statement does not involve the link (the same, with the first of ``links``).
        n_values: ``None`` for any $n\ge2$, else the allowed $n$ (e.g. ``(2,)``).
        d_values: function ``(loss, n, link='softmax') -> tuple of d`` proven for that loss and
            link at ``n`` (may be empty);
            ``None``: ``d`` does not enter (one case with ``d=1``). An explicit ``d`` passed to
            :meth:`check` is used when it is at least the smallest scheduled one.
        size_free: the statement does not involve $n$ either (checked once, reported at ``n=2``).
        negative: tuples ``(description, fn)``; each ``fn(case)`` must come out ``disproved``.
        generic: the size-generic proof (``() -> ProofResult``), for every $n\ge2$, $d\ge1$
            unless ``generic_scope`` says otherwise (``"n = 2 only"``); ``generic_note`` says how.
        generic_negative: tuples ``(description, fn)``; each ``fn()`` runs a wrong variant through
            the generic path and must come out ``disproved`` or ``undecided``, never ``proved``.
        generic_uses: identity ids whose generic proofs this one relies on (a generic proof counts
            as proved only if they are).
        generic_assumptions: what the generic proof still assumes (listed in every report).
        generic_method: short name of the generic technique (``index-nf``, ``size-free``, ...).
        witnesses: one ``(description, fn)`` per entry of ``negative``, in the same order: ``fn(case)`` runs
            that wrong variant's *own* function on an input fixed in advance under which the wrong
            statement really holds (another link, a degenerate size, a state such as $V=0$), and must
            come out ``proved``; it shows that the control's verdict can flip (:meth:`witness_control`).
    """

    id: str
    title: str
    statement: str
    provenance: str
    check_case: CheckFn
    negative: tuple[tuple[str, CheckFn], ...]
    losses: tuple[str, ...] = ("logistic", "square", "kl")
    links: tuple[str, ...] = ("softmax",)
    loss_free: bool = False
    link_free: bool = False
    any_loss: bool = False
    any_link: bool = False
    n_values: tuple[int, ...] | None = None
    d_values: Callable[..., tuple[int, ...]] | None = None
    size_free: bool = False
    note: str = ""
    generic: GenericFn | None = None
    generic_note: str = ""
    generic_negative: tuple[tuple[str, GenericFn], ...] = ()
    generic_scope: str = "all n, d"
    generic_uses: tuple[str, ...] = ()
    generic_assumptions: tuple[str, ...] = ()
    generic_method: str = ""
    witnesses: tuple[tuple[str, CheckFn], ...] = ()
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        # ANY: in scope for every definition; ``losses``/``links`` then list the built-ins (what runs by default)
        if self.losses == ANY:
            object.__setattr__(self, "losses", tuple(LOSSES))
            object.__setattr__(self, "any_loss", True)
        if self.links == ANY:
            object.__setattr__(self, "links", tuple(LINKS))
            object.__setattr__(self, "any_link", True)
        if not self.negative:
            raise ValueError(f"identity {self.id!r} has no negative control")
        if not self.losses or not self.links or "*" in self.losses or "*" in self.links:
            raise ValueError(f"identity {self.id!r} applies to nothing")
        if self.witnesses and len(self.witnesses) != len(self.negative):
            raise ValueError(f"identity {self.id!r}: {len(self.witnesses)} witness(es) for "
                             f"{len(self.negative)} negative control(s); expected one per wrong variant")
        if self.generic is not None and not self.generic_negative:
            raise ValueError(f"identity {self.id!r} has a generic proof without a generic negative control")

    def applies(self, n: int) -> bool:
        """Whether the identity has cases at ``n`` tokens."""
        if self.size_free:
            return n == 2
        return self.n_values is None or n in self.n_values

    def _scope(self, kind: str, asked):
        """The names to run for ``kind`` (``loss``/``link``): ``asked`` if in scope, else ``[]``;
        without ``asked``, the identity's own names (the built-ins for :data:`ANY`)."""
        scope = self.losses if kind == "loss" else self.links
        anything = self.any_loss if kind == "loss" else self.any_link
        getter = get_loss if kind == "loss" else get_link
        if asked is None:
            return list(scope)
        if self.loss_free if kind == "loss" else self.link_free:
            return [scope[0]]
        if anything:
            return [getter(asked).name]
        d = getter(asked)
        return [d.name] if any(d.same_definition(getter(x)) for x in scope) else []

    def applicability(self, loss=None, link=None) -> tuple[bool, str]:
        """``(applies, reason)`` for a loss and a link (names or definitions): why it does or does not apply."""
        los = self._scope("loss", None if loss is None else get_loss(loss).name)
        lis = self._scope("link", None if link is None else get_link(link).name)
        if not lis:
            return False, "stated for links with the definition of " + ", ".join(self.links) + " only"
        if not los:
            return False, "stated for losses with the definition of " + ", ".join(self.losses) + " only"
        if not (self.size_free or self.n_values is None):
            return True, "applies at n = " + ", ".join(map(str, self.n_values)) + " only"
        free = [w for w, f, asked in (("loss", self.loss_free, loss), ("link", self.link_free, link)) if f and asked]
        return True, "applies" + (f" (the statement does not involve the {' or the '.join(free)})" if free else "")

    def cases(self, n: int, d: int | None = None, *, loss: str | None = None,
              link: str | None = None) -> list[Case]:
        """The concrete cases at ``n`` (optionally one ``d``, loss, link; names or definitions)."""
        if not self.applies(n):
            return []
        loss = None if loss is None else get_loss(loss).name
        link = None if link is None else get_link(link).name
        out = []
        for lo in self._scope("loss", loss):
            for li in self._scope("link", link):
                ds = (1,) if self.d_values is None else self.d_values(lo, n, li)
                if d is not None and self.d_values is not None:
                    ds = (d,) if ds and d >= min(ds) else ()
                out.extend(Case(lo, li, n, dd) for dd in ds)
        return out

    def check(self, n: int, d: int | None = None, *, loss: str | None = None,
              link: str | None = None) -> ProofResult:
        """Prove the identity for every applicable case at ``n`` (and ``d``); worst status wins."""
        return combine([(_label(c), self.check_case(c)) for c in self.cases(n, d, loss=loss, link=link)])

    def negative_control(self, n: int, d: int | None = None, *, loss: str | None = None,
                         link: str | None = None) -> ProofResult:
        """Run every wrong variant on every case; ``disproved`` only if all of them are."""
        out = []
        for c in self.cases(n, d, loss=loss, link=link):
            for desc, fn in self.negative:
                out.append((f"{_label(c)} [{desc}]", fn(c)))
        return combine(out, negative=True)


    def witness_control(self, n: int, d: int | None = None, *, loss: str | None = None,
                        link: str | None = None) -> ProofResult:
        """Every wrong variant on its witness input, for every case of the control: ``proved`` only if all hold.

        Combined like a positive check (the worst status wins), so a single witness that does not come out
        ``proved`` keeps the result from being ``proved``. ``undecided`` without witnesses.
        """
        if not self.witnesses:
            return ProofResult("undecided", "none", f"identity {self.id!r} has no witness inputs")
        out = []
        for c in self.cases(n, d, loss=loss, link=link):
            for (desc, _), (wdesc, fn) in zip(self.negative, self.witnesses):
                out.append((f"{_label(c)} [{desc}] on {wdesc}", fn(c)))
        return combine(out)


def on_case(fn: CheckFn, to_case: Callable[[Case], Case]) -> CheckFn:
    """A witness: ``fn`` (a wrong variant's own function) on the case ``to_case(case)`` instead of ``case``.

    Results are cached per witness case (many control cases map to the same witness case)."""
    @lru_cache(maxsize=64)
    def run(c: Case) -> ProofResult:
        return fn(c)
    return lambda case: run(to_case(case))


def one_class_kl(case: Case) -> Case:
    """The kl loss with one class ($d=1$): the cross-entropy is identically 0, so its gradient and the flow are
    0 and every claimed rate, right or wrong, is 0 (why :func:`d_schedule` starts kl at $d=2$)."""
    return Case("kl", case.link, case.n, 1)


def at(expr, point: dict | None):
    """``expr`` (scalar, matrix or list) with ``point`` substituted (``xreplace``); unchanged for ``None``.

    A witness input that is a state or a parameter (``V = 0``, a unit target) is substituted into the very
    expression the wrong variant decides, after the derivation (which treats it as a free symbol)."""
    if not point:
        return expr
    if isinstance(expr, (list, tuple)):
        return [sp.sympify(e).xreplace(point) for e in expr]
    return sp.sympify(expr).xreplace(point)


def zero_V(m) -> dict:
    """$V=0$ (every entry of the value matrix of model ``m``)."""
    return {v: sp.Integer(0) for v in m.V}


def unit_target(m) -> dict:
    r"""The target $e_1$ ($\|w\|^2=1$) of model ``m``."""
    return {w: sp.Integer(1 if k == 0 else 0) for k, w in enumerate(m.target)}


_wx = sp.Symbol("x", real=True)
#: witness inputs (links fixed in advance under which a wrong variant holds; provenance D, never a paper link)
#: elementwise exp: $\varphi=e^a$, so $J=\operatorname{diag}(\varphi)$ exactly (no $ss^\top$ term)
WITNESS_EXP = Link("witness-exp", h=sp.exp(_wx), normalized=False, provenance="D")
#: $\varphi_i=e^{a_i}/n$: a normalized link with a constant normalizer ($k\equiv1$, $k'=0$: no $\varphi k'^\top$ term)
WITNESS_CONST_Z = Link("witness-const-z", h=sp.exp(_wx), k=sp.Integer(1), provenance="D")
#: $\varphi=-\operatorname{softmax}$: $\sum_i\varphi_i=-1$, so $\operatorname{tr}J=\|\varphi\|^2-1$
WITNESS_NEG_SOFTMAX = Link("witness-neg-softmax", h=-sp.exp(_wx), k=sp.exp(_wx), provenance="D")
#: softmax at temperature 1/2 ($h=e^{2x}$): shift invariant, another definition than softmax
WITNESS_SOFTMAX2 = Link("witness-softmax2", h=sp.exp(2 * _wx), provenance="D")


def _label(c: Case) -> str:
    return f"{c.loss}/{c.link} n={c.n} d={c.d}"
