r"""Registry entries ``ID.<identity>`` for the identities proven by ``softpolar derive --check``.

Each :class:`theorems` identity becomes a claim whose check re-proves it
(:meth:`Identity.check`, exact SymPy proof per size) and whose negative control
runs the identity's own wrong variants (:meth:`Identity.negative_control`, which
must come out ``disproved``). Sizes: $n=2,3$ with, for *each* loss and link, its
smallest scheduled $d$ in the quick profile (so the kl loss, whose schedule starts at
$d=2$, is never dropped); $n=2..6$ with every scheduled $d$ (as ``derive --check``)
in the full profile. The check is ``verified`` when every size is proved; the control
is ``refuted`` only by the rule it states: every wrong variant disproved at *every*
size run (one size where a wrong variant holds makes it ``verified``, i.e. the control
did not fail).

The witness (strong) runs the control's sizes, cases and rule with each wrong variant's own
function on its witness input (:attr:`theorems.Identity.witnesses`): an input fixed in advance
under which that wrong statement really holds (the elementwise link $\varphi=e^a$ for the
missing $ss^\top$, $V=0$ for the unsquared $M$, the one-class kl loss whose gradient is 0 for a
flipped sign, ...). Every variant must come out ``proved`` there, so the control says ``verified``.
"""
from __future__ import annotations
from theorems import IDENTITIES, combine

from ..claim import Claim, Control, Outcome, Witness


def _identities() -> dict:
    return dict(IDENTITIES)


def _ns(ctx, ident):
    ns = range(2, 7) if ctx.full else range(2, 4)
    return [n for n in ns if ident.applies(n)]


def _quick_cases(ident, n):
    """Quick profile: ``(loss, link, d)`` with the smallest d scheduled for *that* loss and link (none dropped)."""
    out = []
    for lo in ident.losses:
        for li in ident.links:
            ds = (1,) if ident.d_values is None else tuple(ident.d_values(lo, n, li))
            if ds:
                out.append((lo, li, None if ident.d_values is None else min(ds)))
    return out


def _case_labels(ctx, ident, n):
    if ctx.full or ident.d_values is None:
        return [f"{c.loss}/{c.link} d={c.d}" for c in ident.cases(n)]
    return [f"{lo}/{li} d={d}" for lo, li, d in _quick_cases(ident, n)]


def _at_size(ctx, ident, n, fn):
    """``fn`` (check or negative_control) at ``n``: every scheduled case (full) or the quick cases combined."""
    if ctx.full or ident.d_values is None:
        return fn(n, None)
    results = [(f"{lo}/{li} d={d}", fn(n, d, loss=lo, link=li)) for lo, li, d in _quick_cases(ident, n)]
    return combine(results, negative=fn == ident.negative_control)


def _run(ctx, ident, *, negative: bool, fn=None) -> Outcome:
    rows = []
    for n in _ns(ctx, ident):
        f = fn or (ident.negative_control if negative else ident.check)
        rows.append((n, _at_size(ctx, ident, n, f)))
    if not rows:
        return Outcome("inconclusive", "no applicable size", reason="the identity applies to none of the sizes run")
    statuses = {n: r.status for n, r in rows}
    details = {"status_by_n": statuses, "details": {n: r.detail for n, r in rows},
               "cases_by_n": {n: _case_labels(ctx, ident, n) for n, _ in rows}}
    bad = [(n, r) for n, r in rows if r.status == "disproved"]
    if negative:
        # the control's rule: every wrong variant disproved at every size (not "at some n")
        if len(bad) == len(rows):
            n, r = bad[0]
            return Outcome("refuted", f"every wrong variant disproved at every n={','.join(str(m) for m, _ in rows)} "
                           f"(n={n}: {r.detail})", details=details,
                           counterexample={"n": n, "point": r.counterexample, "detail": r.detail})
        held = [(n, r) for n, r in rows if r.status == "proved"]
        if held:
            n, r = held[0]
            return Outcome("verified", f"a wrong variant holds at n={n}: {r.detail}", details=details)
        n, r = next((n, r) for n, r in rows if r.status != "disproved")
        return Outcome("inconclusive", f"wrong variants not disproved at n={n} (status {r.status})", details=details,
                       reason=f"{r.status} at n={n}: {r.detail}")
    if bad:
        n, r = bad[0]
        return Outcome("refuted", f"identity disproved at n={n}: {r.detail}", details=details,
                       counterexample={"n": n, "point": r.counterexample, "detail": r.detail})
    if all(r.status == "proved" for _, r in rows):
        return Outcome("verified", f"proved exactly for n={','.join(str(n) for n, _ in rows)} ("
                       + "; ".join(f"n={n}: {r.detail}" for n, r in rows[:2]) + ")", details=details)
    n, r = next((n, r) for n, r in rows if r.status != "proved")
    return Outcome("inconclusive", f"status {r.status} at n={n}", details=details,
                   reason=f"{r.status} (not an exact proof) at n={n}: {r.detail}")


#: identities whose proof runs through the SymPy flow (:meth:`theorems.SymbolicModel.flow`): the ``symbolic.*``
#: mutants plant their bugs there
FLOW_IDENTITIES = ("attention.dynamics", "balance.per_token", "output.dynamics", "flow.structured", "replicator",
                   "sum_a.conserved", "two_token.first_integral", "square.rank_one", "logistic.orthogonal_fixed",
                   "reduced.logistic", "clock.logistic", "clock.square_rank_one", "entropy.rate")


def _witness(ident):
    """The control's code path (its sizes, cases and rule) with each wrong variant run on its witness input.

    With :attr:`Identity.witnesses`: every wrong variant's own function on an input fixed in advance under
    which that wrong statement really holds; each must come out ``proved`` (all of them, at every size), and
    the control's rule then says ``verified``. Without: the weak fallback, the identity itself as the
    'wrong variant'.
    """
    def true_variant(n, d=None, *, loss=None, link=None):
        return combine([(f"{c.loss}/{c.link} n={c.n} d={c.d}", ident.check_case(c))
                        for c in ident.cases(n, d, loss=loss, link=link)], negative=True)

    def on_witness_inputs(n, d=None, *, loss=None, link=None):
        return ident.witness_control(n, d, loss=loss, link=link)
    # the quick profile calls fn with the negative_control signature; the equality test in _at_size keys on it
    fn = on_witness_inputs if ident.witnesses else true_variant
    return lambda ctx: _run(ctx, ident, negative=True, fn=fn)


def _witness_record(ident) -> Witness:
    if not ident.witnesses:
        return Witness(description="the control's rule applied to the identity itself (true variant)",
                       run=_witness(ident), kind="weak",
                       weak_because="it re-runs the identity's own proof on the control's code path")
    inputs = "; ".join(f"{desc}: {wdesc}" for (desc, _), (wdesc, _) in zip(ident.negative, ident.witnesses))
    return Witness(description=f"each wrong variant's own code path on an input where it really holds ({inputs})",
                   run=_witness(ident))


def _claim(ident) -> Claim:
    negs = "; ".join(desc for desc, _ in ident.negative)
    return Claim(
        id=f"ID.{ident.id}", title=ident.title, statement=ident.statement, provenance=ident.provenance,
        assumptions=f"losses {', '.join(ident.losses)}; links {', '.join(ident.links)}"
        + (f"; {ident.note}" if ident.note else ""),
        evidence_kind="exact symbolic proof",
        check_description="re-proves the identity as `softpolar derive --check` does (exact SymPy proof per size)",
        expected="verified",
        check=lambda ctx, _i=ident: _run(ctx, _i, negative=False),
        control=Control(f"wrong variants ({negs}) must be disproved",
                        lambda ctx, _i=ident: _run(ctx, _i, negative=True)),
        group="identities",
        witness=_witness_record(ident),
        engines=("symbolic.flow",) if ident.id in FLOW_IDENTITIES else ())


def CLAIMS() -> list[Claim]:  # upper case: read by the catalog like the other modules' CLAIMS lists
    """One claim per identity in :data:`theorems.IDENTITIES` (empty until that registry exists)."""
    return [_claim(ident) for ident in _identities().values()]
