r"""``softpolar certify``: computer-assisted proofs that an initialization polarizes.

``softpolar certify --init FILE [--tau-max T] [--prec BITS] [--order P] [--json] [--out CERT.json]``
encloses the logistic tau-system rigorously (arb balls, :mod:`numerics.validated.enclosure`)
until the enclosure lies in a trapping region $R_i^+$ of the lemma in
:mod:`theorems.trapping` [D]; then $\sigma(a(t))\to e_i$ is proven.

``softpolar certify --check CERT.json [--time-budget S]`` re-verifies a certificate from scratch (refused
after S seconds, default :data:`numerics.validated.certify.DEFAULT_CHECK_TIME_BUDGET`).

``--coq FILE.v`` (with either) writes a Coq file whose theorem ``cert_polarizes`` names the certificate's
$V(0)$, $a(0)$, $\beta^*$ as exact rationals and re-proves, with Coq's own chain of enclosure steps, that the
solution enters $R_i^+$, then applies the machine-checked ``softpolar_trapping`` (the replay,
:func:`numerics.replay_to_coq`; the interval integrator is not trusted). When no replay chain of at most
``REPLAY_COQ_MAX_STEPS`` steps lands, the file is the closure at $\tau^*$ (its bounds in $R_i^+$ by ``lra``) and
the output says what Coq did not check. With ``coqc`` installed it is compiled against the development in
:mod:`theorems.coq` at once (a refusal exits 1).

Exit codes: 0 certified / check passed; 1 not certified / check failed;
2 invalid input (one line on stderr).
"""
from __future__ import annotations

import json
from pathlib import Path

from ._models_cli import add_models_argument
from theorems import InvalidArgument, coq
import numerics
from numerics.io import check_output_file, write_text_atomic
from numerics.progress import Progress
from numerics.validated.certify import DEFAULT_CHECK_TIME_BUDGET, MAX_ORDER, MAX_PREC
from theorems.coq import PRIMITIVE_NUMBER_AXIOMS
from theorems.coq.certstatement import compare
from theorems.errors import check_int


class _TauProgress:
    """``certify: tau = ...`` on stderr through :class:`numerics.progress.Progress` (a bar on a
    terminal or in a notebook, lines in logs, nothing once stderr is closed)."""

    def __init__(self, tau_max: float):
        self.tau_max = tau_max
        self.bar = Progress("certify")

    def __call__(self, tau: float) -> None:
        frac = tau / self.tau_max if 0 < self.tau_max < float("inf") else 0.0
        self.bar.update(frac, note=f"tau = {tau:.4f} / {self.tau_max:g}")

    def close(self) -> None:
        self.bar.close()


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "certify",
        help="prove (computer-assisted) that an initialization polarizes, or check such a proof",
        description="Rigorous arb-ball enclosure of the logistic tau-system du/dtau = b s, da/dtau = J(s) u "
                    "until it enters a proven trapping region R_i^+ = {u_i >= u_j, a_i > a_j}; then "
                    "softmax(a(t)) -> e_i. Exit 0: certified / check passed; 1: not certified / check "
                    "failed; 2: invalid input.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--init", metavar="FILE", help="initial condition JSON (loss logistic, link softmax, V, a, "
                                                    "target; numbers read as exact decimals)")
    src.add_argument("--check", metavar="CERT", help="re-verify the certificate CERT.json")
    p.add_argument("--tau-max", default=None, metavar="T", help="largest internal time to search (default 50)")
    p.add_argument("--prec", type=int, default=None, metavar="BITS", help="working precision in bits (default 128)")
    p.add_argument("--order", type=int, default=None, metavar="P", help="Taylor order of each step (default 20)")
    p.add_argument("--time-budget", type=float, default=None, metavar="S",
                   help="with --init: give up (not certified) after S seconds (default: no limit); with --check: "
                        "refuse the certificate after S seconds (default 600)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--out", metavar="CERT.json", help="write the certificate (JSON, atomically)")
    p.add_argument("--coq", metavar="FILE.v", help="also write a Coq file that re-proves the certificate from its "
                                                  "initial condition (compiled at once when coqc is installed)")
    add_models_argument(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.coq is not None:
        check_output_file("--coq", args.coq, inputs=[args.init, args.check, args.out, *(args.models or ())],
                          suffix=".v")
    if args.time_budget is not None and not 0 < args.time_budget < float("inf"):
        raise InvalidArgument(f"--time-budget={args.time_budget!r} is not allowed; expected a positive number")
    if args.check is not None:
        if args.out is not None:
            raise InvalidArgument(f"--out={args.out!r} is not allowed with --check; expected --out only with --init")
        for flag in ("tau_max", "prec", "order"):  # a certificate fixes its own settings
            if getattr(args, flag) is not None:
                raise InvalidArgument(f"--{flag.replace('_', '-')}={getattr(args, flag)!r} is not used by --check "
                                      "(the certificate records its own settings); expected it only with --init")

        cert = numerics.load_certificate(args.check)
        budget = DEFAULT_CHECK_TIME_BUDGET if args.time_budget is None else args.time_budget
        res = numerics.check_certificate(cert, time_budget=budget)
        summary = {"certificate": args.check, **res.summary()}
        coq_ok = _write_coq(args, cert, summary) if res.ok else True
        if args.json:
            print(json.dumps(summary))
        elif res.ok:
            # every number printed here is derived from re-verified numbers (CheckResult)
            ind = res.independent
            print(f"check passed: {args.check} proves softmax(a(t)) -> e_{res.winner} (token {res.winner}) "
                  f"(tau* = {res.tau_star_decimal}, exact {res.tau_star}; {res.seconds:.2f} s)\n"
                  f"  independent checker: {ind['method']}, {ind['substeps']} substeps\n"
                  f"  replay of the {res.steps_checked} recorded steps with the certifier's method: passed\n"
                  f"  rests on: {_EVIDENCE_LINE}")
            for key, what in (res.not_checked or {}).items():
                print(f"  not checked: {key}: {what}")
        else:
            print(f"check failed: {args.check}: {res.reason}")
        if not args.json and "coq" in summary:
            print(_coq_line(summary["coq"]))
        return 0 if res.ok and coq_ok else 1

    args.tau_max = "50" if args.tau_max is None else args.tau_max
    args.prec = 128 if args.prec is None else args.prec
    args.order = 20 if args.order is None else args.order

    if args.out is not None and not Path(args.out).resolve().parent.is_dir():
        raise InvalidArgument(f"--out={args.out!r} is not allowed; its folder does not exist")
    if args.out is not None:  # before any computation: writable, not a folder, not the input
        check_output_file("--out", args.out, inputs=[args.init, *(args.models or ())])
    # the checker refuses certificates beyond these limits, so certify does not make them
    check_int("--prec", args.prec, minimum=32, maximum=MAX_PREC)
    check_int("--order", args.order, minimum=2, maximum=MAX_ORDER)
    init = numerics.load_init(args.init)
    progress = _TauProgress(float(args.tau_max) if _is_number(args.tau_max) else 0.0)
    try:
        res = numerics.certify(init, tau_max=args.tau_max, prec=args.prec, order=args.order,
                               time_budget=args.time_budget, progress=progress)
    finally:
        progress.close()
    if args.out is not None:
        numerics.write_json_atomic(args.out, res.certificate)
    summary = {"init": args.init, **res.summary()}
    if args.out is not None:
        summary["certificate"] = args.out
    coq_ok = _write_coq(args, res.certificate, summary) if res.status == "certified" else True
    if args.json:
        print(json.dumps(summary))
    else:
        print(_text(res, args))
        if "coq" in summary:
            print(_coq_line(summary["coq"]))
        elif args.coq is not None:
            print(f"  no Coq file written to {args.coq}: not certified")
    return 0 if res.status == "certified" and coq_ok else 1


def _write_coq(args, cert: dict, summary: dict) -> bool:
    """Write ``--coq FILE.v`` for a certified ``cert`` and compile it when coqc is there; record it in ``summary``.

    The file is the replay (issue 37): Coq re-proves the certificate from its initial condition with its own chain of
    first-order enclosure steps (:func:`numerics.replay_to_coq`), so the interval integrator is not trusted. When no
    chain of at most :data:`numerics.validated.coq_emit.REPLAY_COQ_MAX_STEPS` steps lands in R_i^+, the file is the
    closure at tau* instead (Coq checks the last step only) and the summary says so (``replay: false``)."""
    if args.coq is None:
        return True

    info = {"file": args.coq}
    try:
        text = numerics.replay_to_coq(cert)
        info.update(replay=True, steps=text.count("\nLemma step"))
    except InvalidArgument as exc:
        text = numerics.certificate_to_coq(cert)
        info.update(replay=False, replay_reason=str(exc)[:300])
    write_text_atomic(args.coq, text)
    if coq.coqc_path() is None:
        info.update(compiled=False, reason=f"coqc not installed; install it with: {coq.APT_COMMAND}")
        summary["coq"] = info
        return True
    if info["replay"]:
        problems = compare(text, cert)      # the statement names this certificate's V(0), a(0), beta*, winner
        run = coq.check_file(args.coq, allowed=coq.CERTIFICATE_AXIOMS,
                             declarations=("cert_polarizes", "cert_model_polarizes"))
        if problems:
            run.ok, run.output = False, "\n".join([run.output, *problems])
    else:
        run = coq.check_file(args.coq)
    info.update(compiled=run.compiled, ok=run.ok, seconds=round(run.seconds, 2))
    if run.ok and info["replay"]:
        axs = sorted({a for name in ("cert_polarizes", "cert_model_polarizes") for a in run.assumptions.get(name, [])})
        info["axioms"] = {"classical_reals": [a for a in axs if a in coq.STDLIB_REAL_AXIOMS],
                          "primitive_numbers": sum(a in coq.PRIMITIVE_NUMBER_AXIOMS for a in axs),
                          "other": [a for a in axs if a not in coq.CERTIFICATE_AXIOMS]}
    if not run.ok:
        info["coq_output"] = run.output.strip()[-1500:]
    summary["coq"] = info
    return run.ok


def _coq_line(info: dict) -> str:
    if "compiled" in info and not info.get("reason") and not info["ok"]:
        return f"  Coq REFUSED {info['file']}:\n{info['coq_output']}"
    done = (f"  Coq: {info['file']} compiles against theorems/coq ({info['seconds']:.1f} s). "
            if info.get("compiled") else f"  Coq file {info['file']} written, not compiled ({info['reason']}). ")
    if info["replay"]:
        return done + (
            f"{'Coq checked' if info.get('compiled') else 'Once compiled, Coq checks'}: from this V(0), a(0), beta* "
            f"(exact rationals in the statement) the tau-system's solution enters R_i^+ ({info['steps']} enclosure "
            "steps of its own, each from enclosure_step_autonomous, slope bounds by Interval's interval, inclusions by "
            "lra), then softpolar_trapping: the interval integrator is not trusted; cert_model_polarizes carries it "
            "to every (V, a) gradient flow from this V(0), a(0) (the reduction, proven in Coq for every n, d). "
            f"Trusted: Coq's kernel, the classical-reals axioms, the {len(PRIMITIVE_NUMBER_AXIOMS)} primitive-integer/"
            "float specification axioms Interval computes with; assumed in the statement: the clock tau and its "
            "inverse time change sigma exist")
    only = "Coq checked only" if info.get("compiled") else "Once compiled, Coq checks only"
    return done + (f"{only}: the rational bounds at tau* put the state in R_i^+ (lra), then "
                   "softpolar_trapping. NOT checked by Coq: that the solution from this init reaches those bounds "
                   "(the interval integrator and its re-checker are trusted for that), because Coq's own replay "
                   f"failed: {info['replay_reason']}")


#: what a certificate's conclusion rests on, in one line (the certificate's ``lemma_steps`` say it in full).
_EVIDENCE_LINE = ("interval arithmetic + trapping lemma; its sign facts are proven with SymPy and in Coq, the "
                  "invariance continuation and the divergence a_i - a_j -> infinity in Coq (theorems/coq); "
                  "global existence is assumed (one Coq axiom, argued by hand)")


def _is_number(text) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _text(res, args) -> str:
    cert = res.certificate
    head = f"(prec {cert['prec']} bits, Taylor order {cert['order']}, {res.seconds:.2f} s)"
    if res.status != "certified":
        lines = [f"not certified: {res.reason}", f"  after {res.steps} validated steps {head}"]
        if res.region is not None and res.region.undecided:
            lines.append(f"  undecided at the last enclosure (leading token {res.region.winner}): "
                         + "; ".join(res.region.undecided))
        return "\n".join(lines)
    i = res.winner
    b = cert["bounds"]
    lines = [
        f"certified: softmax(a(t)) -> e_{i} (token {i}; tokens are counted from 0)",
        f"  the enclosure enters R_{i}^+ at tau* = {cert['tau_star_decimal']} (exact {cert['tau_star']}) "
        f"after {res.steps} validated steps {head}; max ball radius {res.max_radius:.3g}",
        f"  bounds at tau*, for every j != {i}:",
    ]
    for j in range(len(b["a_gap_lower"])):
        if j != i:
            lines.append(f"    j = {j}: a_{i} - a_{j} >= {b['a_gap_lower_decimal'][j]} > 0,  "
                         f"u_{i} - u_{j} >= {b['u_gap_lower_decimal'][j]} >= 0")
    lines.append(f"  therefore (trapping-region lemma, theorems.trapping [D]) the flow stays in R_{i}^+, "
                 f"every a_{i} - a_j -> infinity and softmax(a(t)) -> e_{i}")
    lines.append(f"  rests on: {_EVIDENCE_LINE}")
    if args.out is not None:
        lines.append(f"  certificate: {args.out} (re-check: softpolar certify --check {args.out})")
    return "\n".join(lines)
