r"""The identity registry and its runner (stable API, used by ``softpolar derive`` and ``verify``).

Public names
------------
* :data:`IDENTITIES` — ``dict[str, Identity]`` in a fixed reading order, keyed by stable ids:
  ``functions.derivatives``, ``shift_invariance.softmax``, ``jacobian.softmax``,
  ``jacobian.structured``, ``jacobian.properties``, ``loss.gradient``, ``flow.structured``,
  ``replicator``, ``attention.dynamics``, ``sum_a.conserved``, ``balance.per_token``,
  ``logistic.orthogonal_fixed``, ``square.rank_one``, ``two_token.first_integral``,
  ``output.dynamics``, ``entropy.rate``, ``reduced.logistic``, ``clock.logistic``,
  ``clock.square_rank_one``.
* :class:`Identity` — frozen dataclass (see :mod:`theorems._id_base`): ``id``, ``title``,
  ``statement`` (LaTeX), ``provenance`` (provenance tag (paper-notes#provenance-tags) such as ``"A/D"``), ``note``,
  ``losses``/``links``/``n_values``/``d_values`` (applicability), ``check(n, d=None, *, loss=None,
  link=None) -> ProofResult``, ``negative_control(n, d=None, ...) -> ProofResult`` (must be
  ``disproved``), ``generic`` (the size-generic proof), ``generic_negative`` (its wrong variants),
  ``generic_scope`` (``"all n, d"`` or ``"n = 2 only"``), ``generic_uses``, ``generic_assumptions``,
  ``generic_method`` and ``generic_note`` (see :mod:`theorems.id_generic_proofs`).
* :class:`IdentityResult` — one row of a run: ``id``, ``n`` (``None`` for the size-generic proof),
  ``ds``, ``status``, ``method``, ``seconds``, ``negative_status``, ``negative_method``, ``detail``,
  ``negative_detail``, ``provenance``, ``cases``, and for generic rows ``scope``, ``uses``,
  ``assumptions``; properties ``holds``, ``control_ok``, ``passed``, ``generic_label``.
* :func:`run_identities` — ``run_identities(ids=None, ns=range(2, 7), jobs=None, *, generic=True,
  progress=None) -> list[IdentityResult]``.
* :func:`get_identity` — look-up with :class:`InvalidArgument` for an unknown id.
* :func:`generic_rows` — ``generic_rows(ids=None) -> list[IdentityResult]``: the size-generic rows only
  (in this process; each generic proof runs once per process).
* :func:`generic_coverage` — ``generic_coverage(link, loss) -> (bool, reason)``: whether the size-generic
  prover's definitions cover a (user) link and loss; :func:`generic_covers` — the same for one identity of a run
  restricted to a loss and / or link.

Status vocabulary (from :class:`ProofResult`): ``proved`` (exact), ``numeric`` (50-digit spot
check only, never called a proof), ``disproved`` (counterexample point), ``undecided``.
A concrete row *passes* when the identity holds (``proved`` or ``numeric``) and its negative
control is ``disproved``. A generic row passes unless it is ``disproved`` (``undecided`` is an
honest "the size-generic form is not decided") and none of its generic negative controls holds
(each is ``disproved`` or ``undecided``, never ``proved``). A generic proof counts as ``proved``
only if the generic proofs it ``uses`` are proved too; otherwise it is ``undecided``, saying why.

A run restricted to a loss and / or link claims a size-generic proof only where the generic prover covers
those definitions (:func:`generic_covers`: a built-in loss; a smooth elementwise link, or a smooth normalized
one with $k=h$, $c=0$); elsewhere the generic row has status ``not covered`` (no proof is run, nothing is
assumed), its detail says why and at which $n$, $d$ the concrete proofs of the run were checked.
"""
from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, replace

from . import _id_flow, _id_invariants, _id_jacobian, _id_output, _id_reduced
from .errors import check_choice, check_int
from ._functions import sigmoid, softplus
from ._id_base import DEFAULT_NS, Case, Identity, combine
from ._models import LOSSES, get_link, get_loss
from .proof import ProofResult

#: The registry, in reading order.
IDENTITIES: dict[str, Identity] = {
    ident.id: ident
    for module in (_id_jacobian, _id_flow, _id_invariants, _id_output, _id_reduced)
    for ident in module.IDENTITIES
}


def get_identity(identity_id: str) -> Identity:
    """Return the identity called ``identity_id``; raise :class:`InvalidArgument` if unknown."""
    check_choice("identity", identity_id, IDENTITIES)
    return IDENTITIES[identity_id]


@dataclass(frozen=True)
class IdentityResult:
    """Outcome of one identity at one size ``n`` (``n=None``: the size-generic proof).

    ``ds`` lists the output dimensions proven at that ``n``; ``cases`` counts the
    (loss, link, d) cases combined (the worst status wins, see :func:`combine`).
    ``negative_status`` is ``disproved`` when every wrong variant was rejected. Generic rows
    (``n=None``) combine their generic negative controls the same way (worst first: ``proved``,
    ``numeric``, ``undecided``, ``disproved``) and add ``scope``, ``uses`` and ``assumptions``.
    """

    id: str
    n: int | None
    ds: tuple[int, ...]
    status: str
    method: str
    seconds: float
    negative_status: str
    negative_method: str
    detail: str
    negative_detail: str
    provenance: str
    cases: int
    scope: str = ""
    uses: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()

    @property
    def holds(self) -> bool:
        """The identity holds (``proved`` or ``numeric``)."""
        return self.status in ("proved", "numeric")

    @property
    def control_ok(self) -> bool:
        """Concrete row: every negative control was ``disproved``. Generic row: none of them holds."""
        if self.n is None:
            return self.negative_status in ("disproved", "undecided", "n/a")
        return self.negative_status in ("disproved", "n/a")

    @property
    def passed(self) -> bool:
        """Concrete row: holds and the controls are disproved. Generic row: not disproved, no control holds."""
        if self.n is None:
            return self.status != "disproved" and self.control_ok
        return self.holds and self.control_ok

    @property
    def generic_label(self) -> str:
        """For generic rows: ``proved (all n, d)``, ``proved (n = 2 only)``, ``undecided``, ... (else '')."""
        if self.n is None:
            return f"{self.status} ({self.scope})" if self.status == "proved" else self.status
        return ""

    def to_dict(self) -> dict:
        """A JSON-ready dict (``ds``, ``uses``, ``assumptions`` as lists, plus ``passed``)."""
        out = asdict(self)
        out["ds"] = list(self.ds)
        out["uses"] = list(self.uses)
        out["assumptions"] = list(self.assumptions)
        out["passed"] = self.passed
        return out


# ---- work units ----------------------------------------------------------------------------------
def _run_case(identity_id: str, case: Case):
    ident = IDENTITIES[identity_id]
    t0 = time.perf_counter()
    pos = ident.check_case(case)
    negs = [(desc, fn(case)) for desc, fn in ident.negative]
    return identity_id, case, pos, negs, time.perf_counter() - t0


def _run_batch(units: list[tuple[str, Case]]):
    """Worker entry point: run a batch of (identity id, case) units sharing derived flows.

    A unit ``("generic", (id, k))`` runs the generic proof (``k = -1``) or generic negative control ``k``.
    """
    return [("generic", run_generic(*c)) if i == "generic" else _run_case(i, c) for i, c in units]


def _cost(case: Case) -> float:
    # rough relative cost of deriving and proving one case (measured: kl and larger n, d dominate)
    return case.n ** 2 * case.d * (3.0 if get_loss(case.loss).form == "cross_entropy" else 1.0)


def _batches(units: list[tuple[str, Case]], nbatches: int) -> list[list[tuple[str, Case]]]:
    """Group units by their model (loss, link, n, d), then balance the groups over batches (LPT)."""
    groups: dict[tuple, list] = {}
    for ident_id, case in units:
        groups.setdefault(tuple(case), []).append((ident_id, case))
    order = sorted(groups.values(), key=lambda g: -_cost(g[0][1]) * (1 + 0.3 * len(g)))
    bins = [[] for _ in range(max(1, nbatches))]
    loads = [0.0] * len(bins)
    for g in order:
        k = loads.index(min(loads))
        bins[k].extend(g)
        loads[k] += _cost(g[0][1]) * (1 + 0.3 * len(g))
    return [b for b in bins if b]


def _default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def run_identities(ids=None, ns=range(2, 7), jobs: int | None = None, *, generic: bool = True,
                   progress=None, loss=None, link=None) -> list[IdentityResult]:
    r"""Re-prove identities for every $n$ in ``ns`` (and size-generically); return one row per (id, n).

    Args:
        ids: identity ids (default: all of :data:`IDENTITIES`).
        ns: token counts, each an int >= 2 (default 2..6). Size-free identities run once (row ``n=2``).
        jobs: worker processes (default: the CPUs available); ``1`` runs in this process.
            Units sharing a derived flow (same loss, link, n, d) go to the same worker, so each
            flow is derived once per run.
        generic: also run the size-generic proofs (rows with ``n=None``).
        progress: optional callable ``progress(done, total)`` called as batches finish.
        loss, link: restrict the run to this loss and / or link (names or definitions; default: every
            loss and link each identity is stated for). An identity that does not apply to them gets no
            row (:func:`scope_report` says why); its size-generic row is kept only if it applies, and it is a
            proof only where the generic prover covers them (:func:`generic_covers`), else ``not covered``.

    Returns:
        ``IdentityResult`` rows in registry order, ``n`` ascending, the generic row last.

    Raises:
        InvalidArgument: unknown id, ``n < 2``, ``jobs < 1``.
    """
    ids = list(IDENTITIES) if ids is None else list(ids)
    for i in ids:
        check_choice("identity", i, IDENTITIES)
    ns = sorted({check_int("n", n, minimum=2) for n in ns})
    jobs = _default_jobs() if jobs is None else check_int("jobs", jobs, minimum=1)

    ids = [i for i in ids if _relevant(i, loss, link)[0]]

    units: list[tuple[str, Case]] = []
    for i in ids:
        ident = IDENTITIES[i]
        for n in ([2] if ident.size_free else ns):
            units.extend((i, c) for c in ident.cases(n, loss=loss, link=link))

    done: list = []
    applies = [i for i in ids if IDENTITIES[i].applicability(loss, link)[0]]
    covers = {i: generic_covers(i, loss, link) for i in applies}
    uncovered = {i: why for i, (ok, why) in covers.items() if not ok}
    gunits = _generic_units([i for i in applies if i not in uncovered]) if generic else []
    # generic units first (flow.structured is the longest single unit), each its own batch
    batches = [[("generic", u)] for u in gunits] + _batches(units, 1 if jobs == 1 else 3 * jobs)
    if jobs == 1:
        for k, b in enumerate(batches):
            done.extend(_run_batch(b))
            if progress is not None:
                progress(k + 1, len(batches))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        # fork where available: a spawned worker re-imports the caller's __main__, which breaks
        # scripts without an ``if __name__ == "__main__"`` guard; the workers only run SymPy.
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, len(batches)) or 1, mp_context=ctx) as pool:
            futures = [pool.submit(_run_batch, b) for b in batches]
            for k, fut in enumerate(as_completed(futures)):
                done.extend(fut.result())
                if progress is not None:
                    progress(k + 1, len(batches))

    generic_rows = _assemble_generic(ids, [u[1] for u in done if u[0] == "generic"]) if generic else []
    rows = _collect(ids, ns, [u for u in done if u[0] != "generic"])
    if generic:
        generic_rows += [_not_covered_row(IDENTITIES[i], why, [r for r in rows if r.id == i])
                         for i, why in uncovered.items()]
    by_id = {i: [r for r in rows if r.id == i] + [r for r in generic_rows if r.id == i] for i in ids}
    return [r for i in ids for r in by_id[i]]


def _collect(ids, ns, done) -> list[IdentityResult]:
    rows = []
    for i in ids:
        ident = IDENTITIES[i]
        for n in ([2] if ident.size_free else ns):
            mine = [u for u in done if u[0] == i and u[1].n == n]
            if not mine:
                continue
            pos = combine([(_label(c), p) for _, c, p, _, _ in mine])
            neg = combine([(f"{_label(c)} [{desc}]", r) for _, c, _, negs, _ in mine for desc, r in negs],
                          negative=True)
            rows.append(IdentityResult(
                id=i, n=n, ds=tuple(sorted({c.d for _, c, _, _, _ in mine})),
                status=pos.status, method=pos.method, seconds=round(sum(u[4] for u in mine), 3),
                negative_status=neg.status, negative_method=neg.method,
                detail=pos.detail, negative_detail=neg.detail,
                provenance=ident.provenance, cases=len(mine),
            ))
    return rows


def _timed(fn) -> tuple[ProofResult, float]:
    t0 = time.perf_counter()
    try:
        res = fn()
    except Exception as exc:  # a crash in the generic machinery is "undecided", with its reason
        res = ProofResult("undecided", "generic", f"raised {type(exc).__name__}: {exc}")
    return res, time.perf_counter() - t0


def _generic_units(ids) -> list[tuple[str, int]]:
    """(id, k) for the generic proof (``k = -1``) and each generic negative control, dependencies included."""
    return [(i, k) for i in _with_uses(ids) if IDENTITIES[i].generic is not None
            for k in range(-1, len(IDENTITIES[i].generic_negative))]


#: Results of generic proofs in this process, keyed by (id, k, function): they take no input, so a
#: second run (tests, repeated ``run_identities`` calls) reuses the first; a replaced function is re-run.
_GENERIC_DONE: dict = {}


def run_generic(identity_id: str, k: int):
    """Run the generic proof (``k = -1``) or generic negative control ``k``: ``(id, k, result, seconds)``."""
    ident = IDENTITIES[identity_id]
    fn = ident.generic if k < 0 else ident.generic_negative[k][1]
    key = (identity_id, k, fn)
    if key not in _GENERIC_DONE:
        _GENERIC_DONE[key] = _timed(fn)
    res, sec = _GENERIC_DONE[key]
    return identity_id, k, res, sec


def _generic_row(ident: Identity, res: ProofResult, negs: list, sec: float) -> IdentityResult:
    neg = combine(negs, negative=True)
    return IdentityResult(
        id=ident.id, n=None, ds=(), status=res.status, method=res.method or ident.generic_method,
        seconds=round(sec, 3), negative_status=neg.status, negative_method=neg.method,
        detail=res.detail, negative_detail="; ".join(f"[{desc}] {r.status}: {r.detail}" for desc, r in negs),
        provenance=ident.provenance, cases=1, scope=ident.generic_scope, uses=ident.generic_uses,
        assumptions=ident.generic_assumptions)


def _with_uses(ids) -> list[str]:
    """``ids`` plus every identity their generic proofs use (transitively), in registry order."""
    need, stack = set(), list(ids)
    while stack:
        i = stack.pop()
        if i not in need:
            need.add(i)
            stack.extend(IDENTITIES[i].generic_uses)
    return [i for i in IDENTITIES if i in need]


def _assemble_generic(ids, results) -> list[IdentityResult]:
    """Generic rows from ``(id, k, ProofResult, seconds)`` results; unproved ``uses`` make a proof ``undecided``."""
    rows = {}
    for i in _with_uses(ids):
        ident = IDENTITIES[i]
        mine = {k: (r, t) for j, k, r, t in results if j == i}
        if -1 not in mine:
            continue
        negs = [(desc, mine[k][0]) for k, (desc, _) in enumerate(ident.generic_negative)]
        rows[i] = _generic_row(ident, mine[-1][0], negs, sum(t for _, t in mine.values()))
    changed = True
    while changed:
        changed = False
        for i, r in rows.items():
            if r.status != "proved":
                continue
            bad = [u for u in r.uses if u not in rows or rows[u].status != "proved"]
            if bad:
                why = ", ".join(f"{u} ({rows[u].status if u in rows else 'no generic proof'})" for u in bad)
                rows[i] = replace(r, status="undecided", detail=f"uses {why}, not proved for all sizes; " + r.detail)
                changed = True
    return [rows[i] for i in ids if i in rows]


def scope_report(ids=None, loss=None, link=None) -> dict[str, str]:
    """For a run restricted to ``loss`` / ``link``: ``{id: reason}`` for each identity of ``ids`` that does
    not apply to them (``{}`` when every one applies or no restriction is asked)."""
    ids = list(IDENTITIES) if ids is None else list(ids)
    out = {}
    for i in ids:
        ok, why = IDENTITIES[i].applicability(loss, link)
        if ok:
            ok, why = _relevant(i, loss, link)
        if not ok:
            out[i] = why
    return out


# ---- what the size-generic prover covers -----------------------------------------------------------
def _loss_covered(L) -> tuple[bool, str]:
    if not any(L.same_definition(b) for b in LOSSES.values()):
        return False, f"the generic prover has the built-in losses only; {L.name!r} is user-defined"
    return True, "a built-in loss"


def _link_covered(K) -> tuple[bool, str]:
    if not K.smooth:
        return False, (f"link {K.name!r} is not smooth; the generic prover's h is differentiable everywhere "
                       "(the concrete proofs hold on the region a_i > 0)")
    if not K.normalized:
        return True, "elementwise link: an instance of the prover's phi_i = h(a_i) with h undefined"
    if K.c != 0 or not K.k_is_h:
        return False, ("the generic prover's normalized link is h(a_i) / sum_j h(a_j); this one has "
                       + ("a constant c != 0" if K.c != 0 else "k != h") + " in its normalizer")
    return True, "normalized link with k = h, c = 0: an instance of the prover's h(a_i) / sum_j h(a_j)"


def generic_coverage(link, loss) -> tuple[bool, str]:
    """Whether the size-generic prover's definitions cover (``link``, ``loss``), and why (not).

    Covered: a loss with the definition of a built-in one, and a smooth link that is elementwise or normalized
    with $k=h$, $c=0$ (an instance of the prover's undefined generator $h$)."""
    K, L = get_link(link), get_loss(loss)
    ok, why = _loss_covered(L)
    return (ok, why) if not ok else _link_covered(K)


def generic_covers(identity_id: str, loss=None, link=None) -> tuple[bool, str]:
    """Whether the size-generic proof of ``identity_id`` (and of every proof it uses) covers the definitions of a
    run restricted to ``loss`` and / or ``link``, and why not. Only the definitions asked for are judged, each
    where the statement involves it (a link-free identity runs under its own link); with neither, ``True``."""
    if loss is None and link is None:
        return True, ""
    for i in _with_uses([identity_id]):
        ident = IDENTITIES[i]
        for asked, free, judge, getter in ((loss, ident.loss_free, _loss_covered, get_loss),
                                           (link, ident.link_free, _link_covered, get_link)):
            if asked is not None and not free:
                ok, why = judge(getter(asked))
                if not ok:
                    return False, why if i == identity_id else f"it uses {i}, not covered: {why}"
    return True, ""


#: identities about named functions (their derivative rules): in a run restricted to a loss and / or link they
#: apply only when those definitions use one of the functions (as ``softpolar derive`` shows them)
_ABOUT_FUNCTIONS = {"functions.derivatives": (softplus, sigmoid)}


def _relevant(identity_id: str, loss=None, link=None) -> tuple[bool, str]:
    funcs = _ABOUT_FUNCTIONS.get(identity_id)
    if funcs is None or (loss is None and link is None):
        return True, ""
    if uses_functions(funcs, loss, link):
        return True, ""
    return False, "the definitions use neither " + " nor ".join(f.__name__ for f in funcs)


def uses_functions(funcs, loss=None, link=None) -> bool:
    """Whether the definitions of ``loss`` / ``link`` (names or definitions) contain one of ``funcs``. A general-form
    loss (a function of beta, whatever its size) counts as using them: its expression is not fixed."""
    exprs = []
    if link is not None:
        K = get_link(link)
        exprs += [K.expr_h, K.expr_k]
    if loss is not None:
        L = get_loss(loss)
        if L.form == "general":
            return True
        exprs += [L.expr_ell, L.expr_f] + ([L.link.expr_h, L.link.expr_k] if L.link is not None else [])
    return any(e is not None and e.has(*funcs) for e in exprs)


def _sizes_text(rows) -> str:
    """``n = 2: d = 1,2; n = 3..4: d = 1`` for the concrete rows of one identity."""
    groups: list = []
    for r in sorted(rows, key=lambda r: r.n):
        ds = ",".join(map(str, r.ds))
        if groups and groups[-1][0] == ds and groups[-1][2] == r.n - 1:
            groups[-1][2] = r.n
        else:
            groups.append([ds, r.n, r.n])
    return "; ".join(f"n = {lo}{'' if lo == hi else f'..{hi}'}: d = {ds}" for ds, lo, hi in groups)


def _not_covered_row(ident: Identity, why: str, concrete: list) -> IdentityResult:
    sizes = (",".join(str(d) for r in concrete for d in r.ds) + " (the statement does not involve n)"
             if ident.size_free else _sizes_text(concrete))
    sizes = ("d = " if ident.size_free else "") + sizes
    where = f"checked at the concrete sizes only ({sizes})" if concrete else "no concrete size was checked in this run"
    return IdentityResult(
        id=ident.id, n=None, ds=(), status="not covered", method="not run", seconds=0.0, negative_status="n/a",
        negative_method="", detail=f"no size-generic proof for this loss and link: {why}; {where}",
        negative_detail="", provenance=ident.provenance, cases=0)


def generic_rows(ids=None) -> list[IdentityResult]:
    """The size-generic rows only (in this process), for ``ids`` (default: all identities)."""
    ids = list(IDENTITIES) if ids is None else list(ids)
    for i in ids:
        check_choice("identity", i, IDENTITIES)
    return _assemble_generic(ids, [run_generic(*u) for u in _generic_units(ids)])


def _label(c: Case) -> str:
    return f"{c.loss}/{c.link} n={c.n} d={c.d}"


__all__ = ["IDENTITIES", "Identity", "IdentityResult", "run_identities", "get_identity", "DEFAULT_NS",
           "generic_coverage", "generic_covers", "run_generic"]
