r"""Registry entries ``ID.<identity>`` for the identities proven by ``softpolar derive --check``.

Each :class:`theorems` identity becomes a claim whose check re-proves it
(:meth:`Identity.check`, exact SymPy proof per size) and whose negative control
runs the identity's own wrong variants (:meth:`Identity.negative_control`, which
must come out ``disproved``). Sizes: $n=2,3$ with the smallest scheduled $d$ in
the quick profile; $n=2..6$ with every scheduled $d$ (as ``derive --check``) in
the full profile.
"""
from __future__ import annotations

from ._claim import Claim, Control, Outcome


def _identities() -> dict:
    try:
        from theorems import IDENTITIES
    except ImportError:  # the identity registry of issue 2 is not installed yet
        return {}
    return dict(IDENTITIES)


def _ns(ctx, ident):
    ns = range(2, 7) if ctx.full else range(2, 4)
    return [n for n in ns if ident.applies(n)]


def _d(ctx, ident, n):
    """None: every scheduled d (full); quick: the smallest scheduled d only."""
    if ctx.full or ident.d_values is None:
        return None
    return min(min(ident.d_values(lo, n)) for lo in ident.losses)


def _run(ctx, ident, *, negative: bool) -> Outcome:
    rows = []
    for n in _ns(ctx, ident):
        fn = ident.negative_control if negative else ident.check
        res = fn(n, _d(ctx, ident, n))
        rows.append((n, res))
    if not rows:
        return Outcome("inconclusive", "no applicable size", reason="the identity applies to none of the sizes run")
    statuses = {n: r.status for n, r in rows}
    details = {"status_by_n": statuses, "details": {n: r.detail for n, r in rows}}
    bad = [(n, r) for n, r in rows if r.status == "disproved"]
    if bad:
        n, r = bad[0]
        what = "wrong variant" if negative else "identity"
        return Outcome("refuted", f"{what} disproved at n={n}: {r.detail}", details=details,
                       counterexample={"n": n, "point": r.counterexample, "detail": r.detail})
    if all(r.status == "proved" for _, r in rows):
        return Outcome("verified", f"proved exactly for n={','.join(str(n) for n, _ in rows)} ("
                       + "; ".join(f"n={n}: {r.detail}" for n, r in rows[:2]) + ")", details=details)
    n, r = next((n, r) for n, r in rows if r.status != "proved")
    return Outcome("inconclusive", f"status {r.status} at n={n}", details=details,
                   reason=f"{r.status} (not an exact proof) at n={n}: {r.detail}")


def _claim(ident) -> Claim:
    negs = "; ".join(desc for desc, _ in ident.negative)
    return Claim(
        f"ID.{ident.id}", ident.title, ident.statement, ident.provenance,
        f"losses {', '.join(ident.losses)}; links {', '.join(ident.links)}"
        + (f"; {ident.note}" if ident.note else ""),
        "exact symbolic proof",
        "re-proves the identity as `softpolar derive --check` does (exact SymPy proof per size)",
        "verified",
        lambda ctx, _i=ident: _run(ctx, _i, negative=False),
        Control(f"wrong variants ({negs}) must be disproved", lambda ctx, _i=ident: _run(ctx, _i, negative=True)),
        None, "identities",
    )


def identity_claims() -> list[Claim]:
    """One claim per identity in :data:`theorems.IDENTITIES` (empty until that registry exists)."""
    return [_claim(ident) for ident in _identities().values()]
