r"""FORMAL: the trapping lemma and the polarization theorem, machine-checked in Coq.

The check builds the Coq development shipped in :mod:`theorems.coq` from a fresh copy
(``python -m theorems.coq build``), reads ``Print Assumptions`` of ``softpolar_trapping`` and
``softpolar_polarization`` and requires

* every file compiles (no ``Admitted``: a test greps the sources);
* the axioms are only the standard library's classical reals (``sig_not_dec``, ``sig_forall_dec``,
  functional extensionality, excluded middle, which its real analysis uses) and, for the
  polarization theorem only, the one existence axiom ``reduced_flow_global_existence``;
* the theorems of ``Reduction.v`` (:data:`theorems.coq.REDUCTION_THEOREMS`: the $(V,a)\to(u,a)$ reduction for
  every $n,d$ from the partial derivatives of $F$, and the parameter flow's trapping and polarization) rest on the
  classical reals only, the reduction's statement compiles with its proof script, and with a doubled $b$ or a
  flipped clock sign it is refused; the same for ``NoCrossing.v`` (:data:`theorems.coq.NO_CROSSING_THEOREMS`;
  planted error: the a-order strict already at $t_0$) and ``Rates.v`` (:data:`theorems.coq.RATE_THEOREMS`,
  $u_i/\tau\to b$; planted error: the limit $2b$);
* ``Generated_n3.v``, ``Generated_n4.v`` (the system and positivity certificates emitted by SymPy) are what
  SymPy emits now;
* two point certificates (CERT's family, seed 0, $n=3,4$): the Coq file ``certify --coq`` writes compiles and
  passes ``check``. Where Coq's own first-order chain lands in $R_i^+$ it is the replay (the statement names
  $V(0)$, $a(0)$, $\beta^*$; the integrator is untrusted; :data:`theorems.coq.CERTIFICATE_AXIOMS`); otherwise the
  closure at $\tau^*$, and the evidence says which. The quick profile compiles a replay of at most
  :data:`QUICK_REPLAY_STEPS` steps (seed 0, $n=3$: one step) and the closure for a longer one ($n=4$: 136 steps,
  compiled in the full profile).

Negative control (a false statement on the same code path): convergence $s\to e_i$ from the
*closed* region $R_i$ (ties $a_i=a_j$ allowed), with the proof script of the true statement, must be
refused by Coq. It is really false: ``ties_refute_convergence`` in the development proves its
negation (the tie solution $u_k=t$, $a_k=0$, $n=2$, $b=2$ keeps $s_1=1/2$), and Coq accepts that refutation
as the negation of exactly the control's statement. The same file with the strict region $R_i^+$
compiles. Witness (strong, a planted bug): the control's file, unchanged, compiles against the
development with $R_i$ defined with strict a-gaps (:data:`theorems.coq.TIES_BUG`).

Without ``coqc`` the claim is not run in a plain ``softpolar verify`` (it says so, with the apt
command); named in ``--claims`` it is inconclusive with that command as the reason.
"""
from __future__ import annotations
from pathlib import Path
import shutil
import tempfile
import numerics
from theorems import InvalidArgument, coq
from theorems.coq import check_generated
from theorems.coq.certstatement import compare

from ..claim import Claim, Control, Outcome, Witness

COQ_REQUIREMENT = ("coqc", None)  # install hint filled from theorems.coq.APT_COMMAND


def _dev(ctx):
    return ctx.memo(("coq-build",), coq.build)


def _missing(ctx):
    if coq.coqc_path() is None:
        return Outcome("inconclusive", "coqc is not installed: the Coq development was not compiled",
                       reason=f"not run: coqc not installed; install it with: {coq.APT_COMMAND}")
    return None


def formal_check(ctx) -> Outcome:
    missing = _missing(ctx)
    if missing is not None:
        return missing
    res = _dev(ctx)
    lines = coq.line_count()
    details = {"coqc": coq.coq_version(), "files": {r.file: {"ok": r.ok, "seconds": round(r.seconds, 2)}
                                                   for r in res.runs},
               "build_seconds": round(res.seconds, 2), "lines": lines, "total_lines": sum(lines.values()),
               "assumptions": res.assumptions, "allowed_axioms": list(coq.ALLOWED_AXIOMS)}
    if not res.ok:
        bad = next((r for r in res.runs if not r.ok), None)
        where = bad.file if bad else "(no file built)"
        return Outcome("refuted", f"the Coq development does not compile ({where})", details,
                       counterexample={"file": where, "coq_output": (bad.output if bad else "")[-2000:]})
    problems = []
    if set(res.assumptions) != set(coq.MAIN_THEOREMS):
        problems.append(f"Print Assumptions printed {sorted(res.assumptions)}, expected {list(coq.MAIN_THEOREMS)}")
    for thm, axs in res.disallowed_axioms().items():
        problems.append(f"{thm} rests on axioms outside the allowed list: {axs}")
    if coq.EXISTENCE_AXIOM in res.assumptions.get("softpolar_trapping", []):
        problems.append("softpolar_trapping uses the existence axiom (it is stated for a given solution)")
    for thm in coq.REDUCTION_THEOREMS + coq.NO_CROSSING_THEOREMS + coq.RATE_THEOREMS:
        extra = [a for a in res.assumptions.get(thm, []) if a not in coq.STDLIB_REAL_AXIOMS]
        if extra:
            problems.append(f"{thm} rests on more than the classical reals: {extra}")
    for what, template, true, wrongs in (
            ("reduction", coq.REDUCTION_TEMPLATE, coq.REDUCTION_TRUE, coq.REDUCTION_WRONG),
            ("no_crossing", coq.NO_CROSSING_TEMPLATE, coq.NO_CROSSING_TRUE, coq.NO_CROSSING_WRONG),
            ("rate", coq.RATE_TEMPLATE, coq.RATE_TRUE, coq.RATE_WRONG)):
        ctl = ctx.memo(("coq-statement-control", what),
                       lambda w=what, t=template, ok=true, bad=wrongs: _statement_control(res, w, t, ok, bad))
        details[f"{what}_control"] = ctl
        if not ctl["true_compiles"]:
            problems.append(f"the {what} statement with its own proof script does not compile")
        problems += [f"the {what} statement with a planted error ({k}) compiles"
                     for k, ok in ctl["wrong_compiles"].items() if ok]
    if not check_generated():
        problems.append("a generated file (Generated_n3.v, Generated_n4.v) differs from what SymPy emits now")
    closed = ctx.memo(("coq-closed-certificates", ctx.full), lambda: _close_certificates(res, full=ctx.full))
    details["certificates_closed_in_coq"] = closed
    problems += [f"certificate n={c['n']} (seed 0) not closed in Coq: {c.get('reason') or c.get('coq_output')}"
                 for c in closed if not c["compiles"]]
    if problems:
        return Outcome("refuted", "; ".join(problems), details,
                       counterexample={"problems": problems, "assumptions_text": res.assumptions_text[-3000:]})
    ax_t = ", ".join(a.split(".")[-1] for a in res.assumptions["softpolar_trapping"])
    ax_p = ", ".join(a.split(".")[-1] for a in res.assumptions["softpolar_polarization"])
    return Outcome(
        "verified",
        f"Coq {details['coqc']} compiles the development ({details['total_lines']} lines, {len(res.runs)} files) "
        f"in {res.seconds:.1f} s; softpolar_trapping rests on {ax_t}; softpolar_polarization on {ax_p}; "
        "Reduction.v proves the (V, a) -> (u, a) reduction for every n, d (" + ", ".join(coq.REDUCTION_THEOREMS)
        + ": classical reals only; a doubled b or a flipped clock sign is refused); NoCrossing.v proves "
        "no-crossing (" + ", ".join(coq.NO_CROSSING_THEOREMS)
        + ": classical reals only; the a-order claimed already at t0 is refused); Rates.v proves u_i/tau -> b ("
        + ", ".join(coq.RATE_THEOREMS) + "; a wrong constant is refused); "
        "Generated_n3/n4.v are what SymPy emits; certify --coq files (CERT's seed 0): "
        + ", ".join(f"n={c['n']} token {c['token']} " + (f"re-proved from its initial condition ({c['steps']} Coq "
                                                         "enclosure steps, integrator untrusted)" if c["replayed"]
                                                         else "closed at tau* only (" + (
                                                             f"its {c['replay_steps']}-step replay is compiled in "
                                                             "the full profile only" if c.get("replay_steps")
                                                             else "no replay chain landed")
                                                         + "; the integrator trusted for reaching tau*)")
                    for c in closed), details)


def _statement_control(dev, what: str, template: str, true: dict, wrongs: dict) -> dict:
    """A theorem's statement and proof script (``template``, e.g. :data:`theorems.coq.REDUCTION_TEMPLATE`) compiled
    as is and with each planted error (``wrongs``): the true one must compile, every wrong one be refused."""
    stem = "Formal" + what.title().replace("_", "")
    ok = coq.check_text(template.format(**true), stem + "True", dev=dev)
    wrong = {k: coq.check_text(template.format(**w), f"{stem}Wrong{i}", dev=dev).ok
             for i, (k, w) in enumerate(wrongs.items())}
    return {"true_compiles": ok.ok, "true_output": ok.output[-800:], "wrong_compiles": wrong}


#: the certificates FORMAL closes in Coq: CERT's family, seed 0, these sizes
CLOSED_SIZES = (3, 4)
#: the quick profile compiles a replay of at most this many steps (about 1-2 CPU s of coqc each); a longer one
#: (seed 0, n = 4: 136 steps) is compiled in the full profile only, the closure at tau* standing in for it in quick
QUICK_REPLAY_STEPS = 24


def _close_certificates(dev, full: bool = True) -> list[dict]:
    """Certify CERT's seed-0 initializations and check the file ``certify --coq`` writes for each: the replay
    (Coq re-proves the certificate from its initial condition, issue 37), compiled and checked against
    :data:`theorems.coq.CERTIFICATE_AXIOMS` with its statement compared to the certificate; where no replay chain
    lands (``replay: False``, the reason recorded) the closure at tau* (Coq checks its bounds lie in R_i^+ only)."""
    out = []
    folder = Path(tempfile.mkdtemp(prefix="softpolar-formal-"))
    try:
        for n in CLOSED_SIZES:
            r = numerics.certify(numerics.family_init(0, n))
            if r.status != "certified":
                out.append({"n": n, "compiles": False, "reason": f"not certified: {r.reason}"})
                continue
            rec = {"n": n, "token": r.winner, "tau_star": r.certificate["tau_star"]}
            try:
                text = numerics.replay_to_coq(r.certificate)
                rec.update(replayed=True, steps=text.count("\nLemma step"))
                problems = compare(text, r.certificate)
                if not full and rec["steps"] > QUICK_REPLAY_STEPS:
                    text, problems = numerics.certificate_to_coq(r.certificate), []
                    k = rec.pop("steps")
                    rec.update(replayed=False, replay_steps=k,
                               replay_reason=f"quick profile: the replay's {k}-step chain lands but is compiled in "
                                             "the full profile only")
            except InvalidArgument as exc:
                text, problems = numerics.certificate_to_coq(r.certificate), []
                rec.update(replayed=False, replay_reason=str(exc)[:300])
            path = folder / f"FormalCert_n{n}.v"
            path.write_text(text)
            run = (coq.check_file(path, dev, allowed=coq.CERTIFICATE_AXIOMS,
                                  declarations=("cert_polarizes", "cert_model_polarizes"),
                                  timeout_s=coq.replay_timeout(rec["steps"]))
                   if rec["replayed"] else coq.check_file(path, dev))
            rec.update(compiles=run.ok and not problems, seconds=round(run.seconds, 2))
            if not rec["compiles"]:
                rec["coq_output"] = "\n".join([run.output.strip()[-600:], *problems])
            out.append(rec)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def _region_file(ctx, region: str):
    res = _dev(ctx)
    if not res.ok:
        raise RuntimeError("the Coq development does not compile; see the check's outcome")
    key = ("coq-region", region)
    return ctx.memo(key, lambda: coq.check_text(coq.REGION_TEMPLATE.format(region=region),
                                                f"Region_{region}", dev=res))


def _refutation(ctx):
    res = _dev(ctx)
    return ctx.memo(("coq-refutation",), lambda: coq.check_text(
        coq.REFUTATION_TEMPLATE.format(region="in_R"), "ControlRefuted", dev=res))


def formal_control(ctx) -> Outcome:
    missing = _missing(ctx)
    if missing is not None:
        return missing
    bad = _region_file(ctx, "in_R")        # ties allowed: false (RefuteTies.v proves the negation)
    good = _region_file(ctx, "in_Rplus")   # witness: the strict region, same script, compiles
    refuted = _refutation(ctx)             # the development proves the negation of exactly this statement
    details = {"statement": "forall solution starting in {region}, s -> e_i",
               "control_region": "in_R (a_j <= a_i: ties allowed)", "control_compiles": bad.ok,
               "control_output": bad.output[-1500:], "witness_region": "in_Rplus (a_j < a_i)",
               "witness_compiles": good.ok, "refutation_in_development": "RefuteTies.ties_refute_convergence",
               "negation_of_the_control_statement_proven": refuted.ok}
    if not good.ok:
        return Outcome("inconclusive", "the witness (strict region) does not compile, so the control proves nothing",
                       details, reason=f"witness refused by Coq: {good.output.strip()[-400:]}")
    if bad.ok:
        return Outcome("verified", "Coq accepted convergence from the closed region R_i (ties allowed)", details)
    if not refuted.ok:
        return Outcome("inconclusive", "Coq refused the control, but the development's refutation does not match "
                       "the control's statement", details, reason=f"refutation check: {refuted.output.strip()[-400:]}")
    return Outcome("refuted", "Coq refuses convergence from the closed region R_i (ties allowed); the same script "
                   "with the strict region R_i^+ compiles; the development proves the negation "
                   "(ties_refute_convergence)", details,
                   counterexample={"coq_error": bad.output.strip()[-600:],
                                   "tie_solution": "n = 2, b = 2, u_k(t) = t, a_k(t) = 0: starts in R_1, s_1 = 1/2"})


def formal_witness(ctx) -> Outcome:
    """The control, unchanged, against the development with a planted bug: R_i defined with strict a-gaps.

    Under the bug the control's statement is the trapping lemma, so the control's file must compile: the
    control can pass, and its refusal on the real development is evidence.
    """
    missing = _missing(ctx)
    if missing is not None:
        return missing
    dev = coq.build(patch=coq.TIES_BUG, upto="Trapping.v")
    if not dev.ok:
        bad = next(r for r in dev.runs if not r.ok)
        return Outcome("inconclusive", "the development with the planted bug does not build", {},
                       reason=f"{bad.file}: {bad.output.strip()[-400:]}")
    run = coq.check_text(coq.REGION_TEMPLATE.format(region="in_R"), "WitnessTiesBug", dev=dev)
    details = {"planted_bug": "Softmax.in_R with a_j < a_i (that is, R_i^+)", "control_compiles": run.ok}
    if run.ok:
        return Outcome("verified", "under the planted bug (R_i defined with strict a-gaps) Coq accepts the control's "
                       "file: the control can pass", details)
    return Outcome("refuted", "the control's file is refused even under the planted bug", details,
                   counterexample={"coq_error": run.output.strip()[-600:]})


CLAIMS = [
    Claim(id="FORMAL", title="The trapping lemma and the polarization theorem, machine-checked in Coq",
          statement=r"(u,a)(\tau_0)\in R_i^+\Rightarrow (u,a)(\tau)\in R_i^+\ \forall\tau\ge\tau_0,\ "
                    r"a_i-a_j\to\infty,\ s\to e_i;\quad a(0)\ \text{uniform},\ u_i(0)>u_j(0)\Rightarrow "
                    r"s\to e_i,\ \tau(t)\to\infty",
          provenance="A/D",
          assumptions="logistic loss, softmax, any n; the reduced tau-system and the logistic flow in t; "
                      "global existence of solutions is the one axiom (reduced_flow_global_existence); "
                      "Coq's standard-library classical reals",
          evidence_kind="machine-checked proof (Coq)",
          check_description="build theorems/coq from a fresh copy with coqc; Print Assumptions of both theorems "
                            "checked against the allowed list; the SymPy-emitted file re-derived",
          expected="verified", check=formal_check,
          control=Control("convergence from the closed region R_i (ties allowed), same proof script, must be "
                          "refused by Coq (witness: the strict region compiles)", formal_control),
          digest_number=None, group="certify", requires=(("coqc", "apt"),),
          engines=("coq.development",),
          witness=Witness(description="the control unchanged, against the development with R_i defined with "
                                      "strict a-gaps (a planted bug): Coq must accept it", run=formal_witness)),
]
