r"""Certified polarization: interval-arithmetic proofs for seeded initializations.

For the logistic loss the reduced system in the internal clock $\tau$ is
$u'=b\,s$, $a'=J(s)u$ [D]. :mod:`theorems.trapping` establishes that the region
$R_i^+=\{u_i\ge u_j,\ a_i>a_j\ \forall j\ne i\}$ is forward-invariant and that
$s\to e_i$ inside it [D]: its sign facts are proven with SymPy (each case split
written out), the continuation and divergence steps are **proven in Coq** (:mod:`theorems.coq`, the
FORMAL claim compiles them); global existence after $\tau^*$ is the one assumed step (a named axiom).
:func:`numerics.certify` encloses the flow with arb balls until the enclosure lies
in some $R_i^+$. A certificate is therefore a proof, for that one initialization,
that softmax polarizes to token $i$, resting on interval arithmetic plus that lemma
(evidence kind "interval arithmetic + lemma (machine-checked in Coq, existence assumed)"; not an exact
symbolic proof).

The claim covers a seeded family of **non-uniform** $a(0)$ (the authors'
normalization-comparison setting $V=0.1\mathcal N$, $a(0)=\mathbf 1+0.1\mathcal N$ [C]),
which the paper's theorem (uniform $a(0)$ [A]) does not cover. Each certificate is
re-verified by ``certify --check``: the **independent checker**
(:mod:`numerics.validated.certcheck`, no enclosure code shared with the certifier) and a
replay of the recorded steps; its winner is compared with a float64 simulation. The
check also requires that the certifier abstains (``not certified``) on a near-tie
initialization below its working precision.

Negative control (a false statement, same data, same code path): for every certified
instance, the certificate rewritten to claim the **wrong winner** (the next token,
with the most lenient bounds and a recomputed digest, so only the mathematics can
refuse it) must fail ``--check``. The control is passable: the same rewrite naming
the true winner is a valid certificate and passes (recorded in the details as
``passable``).
"""
from __future__ import annotations
import numerics
from numerics.validated.certify import wrong_winner_certificate
from theorems import InvalidArgument
from theorems.trapping import (ARGUED_BY_HAND, PROVEN_IN_COQ, check_case_split, check_sign_facts_generic,
                               check_strict_region)

from ..claim import Claim, Control, Outcome, Witness

#: ``Outcome.raised`` of a check whose certificate checker crashed in its own code on a certificate it had read
#: (the checkers' results say so: ``crashed``): no evidence either way; :func:`proofs_check.mutation.mutants.classify`
#: counts it as crashed, never as a kill
CHECKER_CRASH = "CheckerCrash"


def _crash_outcome(records, what, details=None):
    """The inconclusive outcome of a run in which a certificate checker crashed, or ``None`` (none did)."""
    hit = next((r for r in records if r.get("check_crashed")), None)
    if hit is None:
        return None
    crashed = [{k: r.get(k) for k in ("seed", "n", "check_crashed")} for r in records if r.get("check_crashed")]
    return Outcome("inconclusive", f"{what}: the certificate checker crashed on seed {hit.get('seed')}, n = "
                   f"{hit.get('n')}", {**(details or {}), "crashed": crashed},
                   reason=f"checker crashed: {hit['check_crashed']}", raised=CHECKER_CRASH)


def _family(ctx):
    seeds, ns = (range(5), (3, 4, 6, 8)) if ctx.full else (range(2), (3, 4))
    return ctx.memo(("certify_family", tuple(seeds), ns, "certificates"),
                    lambda: numerics.certify_family(seeds, ns, check=True, simulate=True, certificates=True))


def _outcome(records, *, what, extra_bad=None, extra_details=None):
    crash = _crash_outcome(records, what, extra_details)
    if crash is not None:
        return crash
    bad = [r for r in records
           if r["status"] != "certified" or r["check"] != "passed" or not r["agrees"]]
    details = {"instances": [{k: r.get(k) for k in ("seed", "n", "status", "winner", "claimed_winner", "tau_star",
                                                   "steps", "check", "independent", "sim_winner", "argmax_u0",
                                                   "argmax_a0")}
                             for r in records]}
    details.update(extra_details or {})
    if bad or extra_bad:
        r = bad[0] if bad else extra_bad
        return Outcome(
            "refuted",
            f"{what}: {len(records) - len(bad)}/{len(records)} instances certified, re-checked and "
            f"agreeing with the simulation" + ("" if not extra_bad else f"; {extra_bad['reason']}"),
            details, counterexample={"instance": {k: r.get(k) for k in ("seed", "n", "status", "reason",
                                                                         "check", "winner", "claimed_winner",
                                                                         "sim_winner")}})
    not_argmax = sum(r["winner"] != r["argmax_u0"] for r in records)
    worst = max(r["seconds"] + (r["check_seconds"] or 0) for r in records)
    return Outcome(
        "verified",
        f"{what}: {len(records)}/{len(records)} certified and re-checked by --check (independent checker + "
        f"replay), winner = simulated winner in all; {not_argmax} winners differ from argmax u(0); slowest "
        f"certify+check {worst:.1f} s",
        details)


#: largest token count at which CERT also re-proves the sign facts in explicit symbols (a cross-check of the
#: size-generic proof; the cost of that check grows fast with n)
LEMMA_N_MAX = 4


def _lemma(ctx, sizes):
    r"""The trapping lemma's machine-checked part: its sign facts for every $n$, cross-checked at small $n$.

    The sign facts of $R_i^+$ are proven for every $n\ge2$ at once
    (:func:`theorems.trapping.check_sign_facts_generic`, with its two controls), so they cover every
    size a certificate uses; at the family's sizes $n\le$ :data:`LEMMA_N_MAX` they are re-proven in
    explicit symbols too. Returns ``(details, bad)``: one row per check (name, status, expected) and
    the first row whose status is not the expected one (``None`` if all are).
    """
    def run():
        def status(v):
            if v is True or v is False or v is None:
                return {True: "proved", False: "disproved", None: "undecided"}[v]
            return v.status
        rows = [{"check": f"generic: {k}", "status": status(v), "expected": "undecided" if k == "control" else "proved"}
                for k, v in check_case_split().items()]
        rows += [{"check": f"every n: {k}", "status": v.status, "expected": "proved"}
                 for k, v in check_sign_facts_generic().items()]
        rows += [{"check": f"every n: {k}", "status": v.status, "expected": "disproved"}
                 for w in ("closed face", "s_i rate") for k, v in check_sign_facts_generic(wrong=w).items()]
        for n in sizes:
            if n <= LEMMA_N_MAX:
                rows += [{"check": f"n={n}: {k}", "status": v.status,
                          "expected": "disproved" if "control" in k else "proved"}
                         for k, v in check_strict_region(n).items()]
        return rows
    rows = ctx.memo(("trapping-sign-facts", tuple(sizes)), run)
    bad = next((r for r in rows if r["status"] != r["expected"]), None)
    return {"sign_facts": rows, "argued_by_hand": list(ARGUED_BY_HAND), "proven_in_coq": dict(PROVEN_IN_COQ),
            "sizes_with_sign_facts": list(sizes), "sign_facts_scope": "every n >= 2 (size-generic)",
            "sizes_cross_checked_explicitly": [n for n in sizes if n <= LEMMA_N_MAX]}, bad


def cert_check(ctx):
    records = _family(ctx)
    sizes = sorted({r["n"] for r in records})
    lemma, lemma_bad = _lemma(ctx, sizes)
    tie = numerics.certify(numerics.near_tie_init(3, gap="1e-45"), tau_max=10)
    extra_bad = None
    if tie.status == "certified":
        extra_bad = {"seed": None, "n": 3, "status": tie.status, "winner": tie.winner,
                     "reason": "a near tie (gap 1e-45, below the working precision) was certified"}
    elif lemma_bad is not None:
        extra_bad = {"seed": None, "n": None, "status": "lemma", "winner": None,
                     "reason": f"trapping lemma check {lemma_bad['check']!r} is {lemma_bad['status']}, "
                               f"expected {lemma_bad['expected']}"}
    what = "non-uniform a(0), n in " + ",".join(str(n) for n in sizes)
    out = _outcome(records, what=what, extra_bad=extra_bad,
                   extra_details={"near_tie_gap_1e-45": {"status": tie.status, "reason": tie.reason},
                                  "lemma": lemma})
    if out.verdict == "verified":
        coq_rows = ctx.memo(("certify_family", "coq-chains", tuple((r["seed"], r["n"]) for r in records)),
                            lambda: _coq_chains(records))
        out.details["coq_replay"] = coq_rows
        cross = ",".join(str(n) for n in lemma["sizes_cross_checked_explicitly"]) or "none"
        out = Outcome("verified", out.evidence + "; near tie below precision: not certified (abstains); "
                      "lemma: sign facts of R_i^+ proven for every n >= 2 (index normal form + sign atoms; "
                      f"re-proven in explicit symbols at n = {cross}), continuation and divergence "
                      "a_i - a_j -> infinity proven in Coq (FORMAL), global existence assumed (one axiom, "
                      "argued by hand); " + _coq_summary(coq_rows), out.details)
    return out


def _coq_chains(records) -> list[dict]:
    """For each certified instance, the chain ``certify --coq`` would replay in Coq (issue 37): its length, or why
    none lands. Python only (the chain is re-validated by Coq when the file is compiled: FORMAL does so for seed 0)."""
    rows = []
    for r in records:
        row = {"seed": r["seed"], "n": r["n"]}
        try:
            row["coq_steps"] = len(numerics.coq_chain(r["certificate"])) - 1
        except InvalidArgument as exc:
            row["coq_steps"], row["reason"] = None, str(exc)[:200]
        rows.append(row)
    return rows


def _coq_summary(rows) -> str:
    ok = [r for r in rows if r["coq_steps"] is not None]
    said = ", ".join(f"seed {r['seed']} n={r['n']}: {r['coq_steps']} steps" for r in ok) or "none"
    bad = ", ".join(f"seed {r['seed']} n={r['n']}" for r in rows if r["coq_steps"] is None)
    return (f"certify --coq replays from the initial condition (integrator untrusted; compiled by FORMAL for seed 0): "
            f"{said}" + (f"; closure at tau* only (no Coq chain lands, integrator trusted): {bad}" if bad else ""))


def cert_control(ctx):
    records, passable = [], []
    for r in _family(ctx):
        if r["status"] != "certified":
            continue
        cert = r["certificate"]
        n = r["n"]
        wrong = (r["winner"] + 1) % n
        chk = numerics.check_certificate(wrong_winner_certificate(cert, wrong), replay=False)
        records.append({**{k: r[k] for k in ("seed", "n", "status", "tau_star", "steps", "sim_winner", "argmax_u0",
                                            "argmax_a0", "seconds")},
                        "winner": wrong, "claimed_winner": wrong, "check": "passed" if chk.ok else
                        f"failed: {chk.reason}", "check_seconds": chk.seconds, "agrees": wrong == r["sim_winner"],
                        "independent": chk.independent, "check_crashed": chk.crashed or None})
        if not passable:  # the same rewrite naming the true winner: a true statement, which must pass
            ok = numerics.check_certificate(wrong_winner_certificate(cert, r["winner"]), replay=False)
            passable.append({"seed": r["seed"], "n": n, "claimed_winner": r["winner"],
                             "check": "passed" if ok.ok else f"failed: {ok.reason}",
                             "check_crashed": ok.crashed or None})
    return _outcome(records, what="certificates rewritten to claim the wrong winner (next token)",
                    extra_details={"passable": passable})


def cert_witness(ctx):
    """The control's rewrite naming the true winner (recorded in ``details['passable']``): a true statement on
    the same code path (rewrite, digest recomputed, ``--check``), which must pass."""
    rows = cert_control(ctx).details.get("passable", [])
    crash = _crash_outcome(rows, "the rewrite naming the true winner")
    if crash is not None:
        return crash
    if rows and all(r["check"] == "passed" for r in rows):
        return Outcome("verified", f"the rewrite naming the true winner passes --check ({len(rows)} certificate(s))")
    return Outcome("refuted", "the true-winner rewrite did not pass --check", counterexample={"rows": rows})


CERT = Claim(
    id="CERT",
    title="Certified polarization for seeded non-uniform initializations",
    statement=r"\exists\,\tau^*:\ (u(\tau^*),a(\tau^*))\in R_i^+ \Rightarrow \sigma(a(t))\to e_i",
    provenance="D",
    assumptions="logistic loss, softmax; a(0) = 1 + 0.1 N (non-uniform, outside the paper's theorem); "
                "trapping lemma of theorems.trapping (sign facts proven with SymPy; invariance continuation "
                "and divergence a_i - a_j -> infinity proven in Coq, theorems/coq; global existence argued by "
                "hand, one Coq axiom)",
    evidence_kind="interval arithmetic + lemma (machine-checked in Coq, existence assumed)",
    check_description="arb-ball enclosure of the tau-system until it enters R_i^+; certificate re-verified by "
        "`softpolar certify --check` (independent checker with its own enclosure method + replay); winner "
        "compared with a float64 simulation; a near tie below precision must not be certified",
    expected="verified",
    check=cert_check,
    control=Control("each certificate rewritten to claim the wrong winner (digest recomputed) must be refused "
                "by --check", cert_control),
    digest_number=None,
    group="certify",
    witness=Witness(description="the same certificate rewrite naming the true winner", run=cert_witness),
    engines=('certify.field',),
)


CLAIMS = [CERT]
