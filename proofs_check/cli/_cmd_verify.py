"""``softpolar verify`` and ``softpolar list``: run the claim registry, write the report.

``softpolar verify [--claims ID,..] [--profile quick|full] [--out DIR] [--json] [--device ..] [--seed ..]
[--mutants [NAME,..]]`` exits 0 iff every selected claim got its expected verdict and every negative
control failed (reached the opposite verdict) -- and, with ``--mutants``, every numeric claim was
killed (or detected) by a mutant aimed at it, no check crashed, and every control was shown passable
(:mod:`..mutation`), and, with ``--require-all``, the report is complete (``summary.complete``: no selected
claim left out, for the profile or a missing program; none came back undecided; no claim resting on one that
did not run and pass here); 1 otherwise; 2 on bad input. Without ``--require-all`` an incomplete report still
exits 0 (a fresh machine without Coq), but its summary line, report.md's headline and report.json's summary say
what did not run and why. A report of claims named in ``--claims`` says it is a selection (k of N registered,
``summary.selection``): complete for what it selected, never read as the whole registry (issue 39).
Results go to stdout: one line per claim as it finishes (in report order, whichever process ran it),
then the summary line (with ``--json`` they go to stderr, so that stdout is the JSON alone). Progress
goes to stderr: a claim still running after :data:`LONG_CLAIM_SECONDS` shows its elapsed time, and
how far it is where its code reports it (:func:`numerics.progress.report`), every 10 s.
``--jobs N`` (default ``auto``: one per CPU) runs the claims
on N processes (:mod:`..parallel`), and with ``--mutants`` the mutants too, one process per mutant
(:func:`..mutation.run_mutants`); the report keeps the registry's order. ``--engines NAME`` picks the engine
settings (:data:`..claim.ENGINE_SETTINGS`: ``current``, the default, or ``baseline``, the code path before the
speed-ups kept for bench row 15); they go to the checks in ``ctx.engines`` and to report.json
(``environment.engines``, with ``high_precision_backend``: the engine ``auto`` resolved to), and never change a
verdict.
"""
from __future__ import annotations

import sys
import time
import difflib
from functools import partial
import json
import shutil
import textwrap

from numerics.integrate.settle import DEFAULT_MAX_LOG10_T

from theorems import InvalidArgument, all_links, all_losses, builtin_link_names, get_link, get_loss, is_builtin

from ._models_cli import add_models_argument
from proofs_check import Context, ENGINE_SETTINGS, cpu_count, run_claim, run_claims, select
from proofs_check import PROFILES
from numerics.integrate import MAX_DPS
from numerics.io import folder_lock
from numerics.progress import Heartbeat
from theorems.errors import check_int
# the core registry module itself (not names copied out of it): a test or a plug-in that replaces
# ``_registry.registry`` is seen by the id check and the selection alike
from .. import catalog as _registry
from ..claims import applicability, family_claims
# the mutation wing's door itself, for the same reason: a test that replaces a door name is seen here
from .. import mutation as mutation_wing
from ..report import (check_target, dumps, environment, incomplete_text, not_settled_text, prerender, selection_text,
                      tex_plain, write_report)

DEFAULT_OUT = "softpolar-report"
#: a claim running longer than this shows progress on stderr, one line (or bar redraw) per interval
LONG_CLAIM_SECONDS = 10.0
PROGRESS_INTERVAL = 10.0


def _run_with_progress(claim, ctx, *, mode=None):
    """:func:`run_claim` under a :class:`numerics.progress.Heartbeat` (silent for a short claim)."""
    with Heartbeat(f"verify {claim.id}", after=LONG_CLAIM_SECONDS, interval=PROGRESS_INTERVAL, mode=mode):
        return run_claim(claim, ctx)


def _split_ids(text: str) -> list[str]:
    """Split ``--claims`` on the commas outside brackets: a family id such as ``F.rate_law[logistic,softmax]``
    holds a comma of its own (issue 39: ``text.split(",")`` cut it in two, so no family claim could be named)."""
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise InvalidArgument(f"claims={text!r} has a ']' without its '[' at character {k}; expected "
                                      "comma-separated claim ids (see `softpolar list`)")
        elif ch == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    if depth:
        raise InvalidArgument(f"claims={text!r} has a '[' that is never closed; expected comma-separated claim "
                              "ids (see `softpolar list`)")
    parts.append(text[start:])
    return [t.strip() for t in parts if t.strip()]


def _claim_ids(text: str | None) -> list[str] | None:
    if text is None:
        return None
    ids = _split_ids(text)
    if not ids:
        raise InvalidArgument(f"claims={text!r} is empty; expected comma-separated claim ids (see `softpolar list`)")
    return ids


def _check_known(ids: list[str] | None, known, what: str = "a known claim id") -> None:
    """Refuse unknown ids with one line that names them and, for each, the closest known ids (not all of them)."""
    known = list(known)
    unknown = [i for i in ids or () if i not in known]
    if not unknown:
        return
    close = []
    for i in unknown[:3]:  # a few, as shown_ids names a few
        close += [m for m in difflib.get_close_matches(i, known, n=3, cutoff=0.6) if m not in close]
    if close:
        hint = f"did you mean {', '.join(close)}?"
    elif len(known) <= 12:
        hint = f"expected ids from: {', '.join(known)}"
    else:
        hint = f"expected one of the {len(known)} ids that `softpolar list` prints"
    raise InvalidArgument(f"claims={_registry.shown_ids(unknown)} is not {what}; {hint}")


def _device(name: str) -> str:
    if name == "cpu":
        return name
    if name == "cuda" or name.startswith("cuda:"):
        try:
            import torch
        except ImportError:
            raise InvalidArgument(f"device={name!r} needs torch; install it with `pip install torch`") from None
        if not torch.cuda.is_available():
            raise InvalidArgument(f"device={name!r} is not available (torch.cuda.is_available() is False); "
                                  "expected 'cpu'")
        return name
    raise InvalidArgument(f"device={name!r} is not allowed; expected 'cpu', 'cuda' or 'cuda:N'")


def _jobs(text) -> int:
    """``--jobs``: ``auto`` (one process per CPU) or an integer >= 1."""
    if str(text) == "auto":
        return cpu_count()
    try:
        value = int(str(text))
    except ValueError:
        value = 0
    if value < 1 or value > 1024:
        raise InvalidArgument(f"jobs={text!r} is not allowed; expected 'auto' or an integer from 1 to 1024")
    return value


def _engines(name):
    """``--engines``: a name of :data:`..claim.ENGINE_SETTINGS` -> its :class:`..claim.Engines` record."""
    if name not in ENGINE_SETTINGS:
        raise InvalidArgument(f"engines={name!r} is not allowed; expected one of {', '.join(ENGINE_SETTINGS)}")
    return ENGINE_SETTINGS[name]


def _canonical_command(args) -> list[str]:
    """The resolved command line (every option explicit), saved in report.json."""
    out = ["verify"]
    if args.claims is not None:
        out += ["--claims", args.claims]
    out += ["--profile", args.profile, "--seed", str(args.seed), "--device", args.device, "--dps", str(args.dps),
            "--out", str(args.out), "--jobs", str(getattr(args, "jobs", "1")),
            "--engines", str(getattr(args, "engines", "current")),
            "--max-log-t", str(getattr(args, "max_log_t", DEFAULT_MAX_LOG10_T))]
    out += ["--mutants", args.mutants] if getattr(args, "mutants", None) else []
    out += ["--require-all"] if getattr(args, "require_all", False) else []
    for opt in ("models", "link", "loss", "optimizer"):
        val = getattr(args, opt, None)
        for v in (val if isinstance(val, list) else [val] if val is not None else []):
            out += [f"--{opt}", str(v)]
    return out + (["--json"] if args.json else [])


def cmd_verify(args) -> int:
    if getattr(args, "optimizer", None) is not None:  # the optimizer as a third argument (._families_optim)
        claims = family_claims(args.link or "softmax", args.loss or "logistic", optimizer=args.optimizer)
        args.family_size = len(claims)
        claims, skipped = _pick(claims, args.claims, f"a claim of --optimizer {args.optimizer}"), []
    elif getattr(args, "link", None) is not None or getattr(args, "loss", None) is not None:
        claims, skipped = _family_selection(args), []
    else:
        _check_known(_claim_ids(args.claims), _registry.registry())
        claims = select(_claim_ids(args.claims), args.profile)
        skipped = _registry.not_run(_claim_ids(args.claims), args.profile)
    check_int("seed", args.seed, minimum=0, maximum=2**32 - 1)
    check_int("dps", args.dps, minimum=15, maximum=MAX_DPS)
    _jobs(getattr(args, "jobs", "1"))  # a bad --jobs fails now
    max_log_t = check_int("max_log_t", getattr(args, "max_log_t", DEFAULT_MAX_LOG10_T), minimum=100,
                          maximum=1_000_000)
    ctx = Context(profile=args.profile, seed=args.seed, device=_device(args.device), dps=args.dps,
                  engines=_engines(getattr(args, "engines", "current")), max_log10_t=max_log_t)

    check_target(args.out)  # a bad report folder fails now, not after every claim has run
    with folder_lock(args.out, "--out"):  # a second verify on the same folder is refused at once
        return _verify(args, claims, ctx, skipped)


def _split_reasons(text: str) -> list[str]:
    """The reasons in one applicability text, split at '; ' outside parentheses."""
    parts, depth, cur = [], 0, ""
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ";" and depth == 0 and text[i + 1:i + 2] == " ":
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return [p for p in (*parts, cur.strip()) if p]


def _family_selection(args) -> list:
    """``--link NAME [--loss NAME]``: every claim family that applies to the link with that loss (every known
    loss when none is given), :mod:`..claims._families`; ``--claims`` then picks among their ids."""
    if getattr(args, "link", None) is None:
        raise InvalidArgument(f"--loss {args.loss} needs --link NAME; expected both, or neither for the registry")
    link = get_link(args.link)
    losses = [get_loss(args.loss)] if args.loss is not None else [get_loss(n) for n in all_losses()]
    claims = []
    for loss in losses:
        claims.extend(family_claims(link, loss))
    if not claims:
        # each distinct reason once, with the families whose applicability text gives it (they share most of them)
        blocked: dict = {}
        for loss in losses:
            for f, _ok, r in applicability(link, loss):
                for part in _split_reasons(r):
                    blocked.setdefault(part, []).append(f)
        why = "; ".join(f"{part} [{', '.join(dict.fromkeys(fs))}]" for part, fs in blocked.items())
        raise InvalidArgument(f"--link {link.name}{f' --loss {args.loss}' if args.loss else ''}: no claim family "
                              f"applies ({why}); expected a normalized link with a margin loss, a square loss, "
                              "or an elementwise gate")
    args.family_size = len(claims)  # what the report's selection is measured against (report.selection_text)
    return _pick(claims, args.claims, f"a family claim of --link {link.name}")


def _pick(claims, text, what):
    """The claims named by ``--claims`` (``text``; all when ``None``), in the order named: the bracket-aware split,
    unknown ids refused in one line with close matches (``what``: what a known id is)."""
    ids = _claim_ids(text)
    if not ids:
        return claims
    known = {c.id: c for c in claims}
    _check_known(ids, known, what)
    return [known[i] for i in dict.fromkeys(ids)]


def _selection(args, claims, skipped) -> dict:
    """What this report covers against what it could have covered: the registry (a plain verify) or the claim
    families of ``--link``/``--loss``; ``by`` says what narrowed it (``--claims``), so a report of a few named
    claims never reads as a report of all of them (issue 39)."""
    if getattr(args, "family_size", None) is not None:
        of = "the families of " + " ".join(f"--{o} {getattr(args, o)}" for o in ("link", "loss", "optimizer")
                                           if getattr(args, o, None) is not None)
        total = args.family_size
    else:
        of, total = "the registry", len(_registry.registry())
    selected = len(claims) + len(skipped)
    return {"of": of, "registered": total, "selected": selected,
            "by": "--claims" if _claim_ids(args.claims) and selected < total else None}


def _verify(args, claims, ctx, skipped=()) -> int:
    mutants = None
    if getattr(args, "mutants", None):
        mutants = mutation_wing.select_mutants(args.mutants)  # bad names fail now, before any claim runs
    argv = _canonical_command(args)
    results_out = sys.stderr if args.json else sys.stdout  # stdout is the JSON alone with --json
    for claim, why in skipped:
        print(f"not run: {claim.id} ({why})", file=results_out, flush=True)
    results = []
    start = time.perf_counter()
    width = max(len(c.id) for c in claims)

    jobs = _jobs(getattr(args, "jobs", "1"))
    # several processes share the terminal: progress as lines, never \r bars drawn over each other
    run = partial(_run_with_progress, mode="lines" if jobs > 1 else None)
    # in report order, whichever process ran each claim (proofs_check.parallel)
    for k, r in run_claims(claims, ctx, jobs=jobs, out_dir=args.out, run=run, finish=prerender):
        k, claim = k + 1, claims[k]
        results.append(r)
        status = "ok  " if r.passed else "FAIL"
        print(f"[{k:2d}/{len(claims)}] {status} {claim.id:<{width}}  {r.outcome.verdict:<12} "
              f"(expected {claim.expected}); control {r.control.verdict} (needs {_registry.opposite(claim.expected)})  "
              f"{r.seconds:6.1f} s", file=results_out, flush=True)
    mutation = None
    if mutants is not None:
        # side by side like the claims (--jobs), one process per mutant, its patch applied there only
        mutation = mutation_wing.run_mutants(claims, ctx, mutants,
                                             log=lambda line: print(line, file=sys.stderr, flush=True),
                                             jobs=jobs, out_dir=args.out)
        if args.mutants == "all":  # and the checkers' own mutants: do the tamper/soundness suites catch them?
            mutation["checker_mutants"] = mutation_wing.run_checker_mutants(
                log=lambda line: print(f"checker mutant {line}", file=sys.stderr, flush=True), jobs=jobs,
                estimates=mutation_wing.previous_seconds(ctx.profile, args.out))
    witnesses = {}
    if getattr(args, "link", None) is not None:  # claim families: show each control passable on its witness
        for c in claims:
            if c.witness is not None:
                witnesses[c.id] = w = mutation_wing.run_witness(c, ctx)
                print(f"witness {c.id:<{width}}  control {w['control']:<12} "
                      f"{'passes' if w['passes'] else 'NOT PASSED'} ({w['kind']}): {w['witness']}",
                      file=results_out, flush=True)
    total = time.perf_counter() - start
    env = environment(ctx, argv)
    if witnesses:
        env["family_witnesses"] = witnesses
    if skipped:
        env["not_run"] = {c.id: why for c, why in skipped}
    env["selection"] = _selection(args, claims, skipped)
    data = write_report(results, args.out, env, total, mutation=mutation)
    n_pass = sum(r.passed for r in results)
    missing = incomplete_text(results, env.get("not_run"))
    undecided = [r for r in results
                 if r.outcome.verdict == "inconclusive" and "undecided" in (r.outcome.evidence or "")]
    no_law = sum("no law derived" in r.outcome.evidence for r in undecided)
    kinds = [not_settled_text([r for r in undecided if "no law derived" not in r.outcome.evidence], ctx),
             f"{no_law} with no derivable law" if no_law else ""]
    undecided_text = (f" ({len(undecided)} undecided: {', '.join(k for k in kinds if k)}; undecided is never a "
                      "pass)") if undecided else ""
    scope = selection_text(env.get("selection"))
    scope = f" ({scope})" if scope else ""
    if missing is None:
        print(f"softpolar verify: {n_pass}/{len(results)} claims passed in {total:.1f} s{undecided_text}{scope}; "
              f"report in {args.out}/",
              file=results_out, flush=True)
    else:  # never reads as complete: what did not run here, and why
        print(f"softpolar verify: {n_pass}/{len(results)} claims run passed in {total:.1f} s{undecided_text}{scope}; "
              f"{missing}; report in {args.out}/" + ("" if getattr(args, "require_all", False) else
                                          " (incomplete; --require-all makes this exit 1)"),
              file=results_out, flush=True)
    mutation_ok = True
    if mutation is not None:
        m = mutation["summary"]
        mutation_ok = m["ok"]
        c = m["counts"]
        print(f"softpolar verify --mutants: {m['mutants']} mutants, {m['claim_runs']} claim runs: "
              f"{c['killed']} killed, "
              f"{c['detected']} detected, {c['crashed']} crashed, {c['equivalent']} equivalent, {c['survived']} "
              f"survived in {m['total_seconds']:.1f} s; numeric claims not killed: "
              f"{', '.join(m['numeric_claims_not_killed']) or 'none'}; crashes: {', '.join(m['crashes']) or 'none'}; "
              f"controls not shown passable: {', '.join(m['controls_not_shown_passable']) or 'none'}",
              file=results_out, flush=True)
        cm = mutation.get("checker_mutants")
        if cm is not None:
            mutation_ok = mutation_ok and cm["baseline_clean"] and cm["caught"] == cm["total"]
            survived = [r["name"] for r in cm["mutants"] if not r["caught_by"]]
            per = {}
            for r in cm["mutants"]:
                per.setdefault(r["checker"], [0, 0])
                per[r["checker"]][0] += bool(r["caught_by"])
                per[r["checker"]][1] += 1
            print(f"softpolar verify --mutants: checker mutants {cm['caught']}/{cm['total']} caught ("
                  + ", ".join(f"{k} {a}/{b}" for k, (a, b) in per.items())
                  + f"; survived: {', '.join(survived) or 'none'}; suites clean without mutants: "
                  f"{'yes' if cm['baseline_clean'] else 'NO'}) in {cm['seconds']:.1f} s",
                  file=results_out, flush=True)
    if args.json:
        print(dumps(data))
    witnesses_ok = all(w["passes"] for w in witnesses.values())
    complete_ok = data["summary"]["complete"] or not getattr(args, "require_all", False)
    return 0 if n_pass == len(results) and mutation_ok and witnesses_ok and complete_ok else 1


#: short names of the evidence kinds for ``softpolar list`` (the full names are in ``list --json`` and the report)
EVIDENCE_SHORT = {
    "exact symbolic proof": "symbolic proof",
    "high-precision numerics": "high-precision",
    "property search": "property search",
    "asymptotic fit": "asymptotic fit",
    "reproduction of the authors' settings": "reproduction",
    "interval arithmetic + lemma (partly argued by hand)": "interval+lemma",
    "interval arithmetic + lemma (machine-checked in Coq, existence assumed)": "interval+Coq",
    "machine-checked proof (Coq)": "Coq proof",
}
#: ``softpolar list`` fits this many columns (fewer when the terminal is narrower, never under 80)
LIST_WIDTH = 100


def list_table(claims, width: int = LIST_WIDTH) -> str:
    """The registry as a text table at most ``width`` columns wide: the title (math as ASCII) wraps
    under itself; ``*`` after the expected verdict marks a claim that only the full profile runs."""
    head = ("id", "provenance", "expected", "evidence", "title")
    rows = [(c.id, c.provenance, c.expected + ("*" if "quick" not in c.profiles else ""),
             EVIDENCE_SHORT.get(c.evidence_kind, c.evidence_kind), tex_plain(c.title)) for c in claims]
    widths = [max(len(r[j]) for r in rows + [head]) for j in range(4)]
    widths[0] = min(widths[0], 12)  # a longer id (ID.<identity>) gets a line of its own
    indent = sum(widths) + 2 * len(widths)
    room = max(width - indent, 20)
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    out = [fmt.format(*head).rstrip(), fmt.format(*("-" * w for w in widths), "-" * min(room, 5))]
    for r in rows:
        parts = textwrap.wrap(r[4], room) or [""]
        if len(r[0]) > widths[0]:
            out.append(r[0])
            r = ("", *r[1:])
        out.append(fmt.format(*r[:4], parts[0]))
        out += [" " * indent + p for p in parts[1:]]
    legend = ("* only the full profile runs it (name it in --claims to run it in any profile). Evidence: "
              + "; ".join(f"{v} = {k}" for k, v in EVIDENCE_SHORT.items() if v != k)
              + ". Full records: softpolar list --json.")
    out += [""] + textwrap.wrap(legend, width)
    return "\n".join(out) + "\n"


def links_table() -> str:
    """``softpolar list --links``: every link name known now (built-ins, then user links), with its definition."""
    rows = [(name, K.provenance, "built-in" if is_builtin(K) else "user", "smooth" if K.smooth else "not smooth",
             repr(K)) for name, K in all_links().items()]
    if not any(name.startswith("ssmax-n") for name, *_ in rows):
        rows.append((builtin_link_names()[-1], "D", "built-in", "smooth", "Scalable-Softmax for N tokens: softmax of "
                     "log(N) a (N >= 2 in the name)"))
    widths = [max(len(r[j]) for r in rows) for j in range(4)]
    return "\n".join("  ".join(f"{c:<{w}}" for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows) + "\n"


def cmd_list(args) -> int:
    if getattr(args, "links", False):
        sys.stdout.write(links_table())
        return 0
    reg = _registry.registry()
    if args.json:
        print(json.dumps([{"id": c.id, "provenance": c.provenance, "expected": c.expected, "family": c.family,
                           "profiles": list(c.profiles), "evidence_kind": c.evidence_kind, "title": c.title}
                          for c in reg.values()], indent=1))
        return 0

    width = max(80, min(LIST_WIDTH, shutil.get_terminal_size((LIST_WIDTH, 24)).columns))
    sys.stdout.write(list_table(reg.values(), width))
    return 0


def add_parser(subparsers) -> None:
    """Create the ``verify`` and ``list`` subcommands."""
    p = subparsers.add_parser(
        "verify", help="check every registered claim (with negative controls) and write a report",
        description="Run each claim's check and its negative control; write report.md, report.json and figures. "
                    "Exit 0 iff every claim run got its expected verdict and every negative control failed; a claim "
                    "left out (a program it needs is missing) is named with why, and --require-all makes it exit 1.")
    p.add_argument("--claims", default=None, metavar="ID,..", help="comma-separated claim ids (default: all)")
    p.add_argument("--profile", default="quick", choices=PROFILES,
                   help="quick (minutes on 2 cores) or full (long horizons, all sizes; < 30 min)")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                   help=f"report directory, replaced atomically (default: ./{DEFAULT_OUT})")
    p.add_argument("--json", action="store_true", help="also print report.json to stdout")
    p.add_argument("--require-all", action="store_true",
                   help="exit 1 unless the report is complete: every selected claim ran (a plain verify leaves out "
                        "the full-profile-only claims in the quick profile and a claim whose program is missing, "
                        "e.g. FORMAL without coqc, and says so), none came back undecided, and every claim whose "
                        "argument rests on another (CERT and ATLAS on FORMAL) has it passed in this report; a "
                        "--claims report says it is a selection (k of N)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--seed", type=int, default=0, help="seed of the property searches (default 0)")
    p.add_argument("--dps", type=int, default=30, help="mpmath digits for high-precision checks (default 30)")
    p.add_argument("--max-log-t", type=int, default=DEFAULT_MAX_LOG10_T, metavar="E",
                   help="bound on log10 t of the settling runs of the derived-law checks (the rate_law family): "
                        f"integrate to t = 1e100, 1e300, ... up to 1e<E> until the law has settled; not settled "
                        f"by then is 'undecided', never a pass (default {DEFAULT_MAX_LOG10_T}, range 100..1000000)")
    p.add_argument("--jobs", default="auto", metavar="N",
                   help="processes running claims (and, with --mutants, mutants) side by side: auto (one per "
                        "CPU, the default) or N; 1 runs them one after another. The report and the verdicts do not "
                        "depend on it")
    p.add_argument("--engines", default="current", metavar="NAME",
                   help="engine settings of the checks: current (the default) or baseline, today's code path kept "
                        "for the bench (GBS for the main high-precision runs, with the Taylor cross-check; the box "
                        "engine before the fast scheme for ATLAS). Slower; the verdicts do not depend on it")
    p.add_argument("--mutants", nargs="?", const="all", default=None, metavar="NAME,..",
                   help="also re-run the claims under planted bugs (all, or the named mutants) and write the kill "
                        "matrix; slow (minutes per mutant)")
    p.add_argument("--link", default=None, metavar="NAME",
                   help="run the claim families (vertex, partial, no_polarization, top_gap, no_crossing, rate_law, "
                        "loss_law, value_law) that apply to this link, built-in or from --models, instead of the "
                        "registry")
    p.add_argument("--loss", default=None, metavar="NAME",
                   help="with --link: only this loss (default: every known loss a family applies to)")
    p.add_argument("--optimizer", default=None, metavar="NAME",
                   help="run the optimizer claims (polarizes, winner, and the rate law where one is derived) of "
                        "this optimizer, built-in or from --models, with --loss (default logistic) and --link "
                        "(default softmax)")
    add_models_argument(p)
    p.set_defaults(func=cmd_verify)

    q = subparsers.add_parser("list", help="print the claim registry as a table")
    q.add_argument("--json", action="store_true", help="print the registry as JSON")
    q.add_argument("--links", action="store_true",
                   help="print the link names instead (built-in and from --models), with their definitions")
    add_models_argument(q)
    q.set_defaults(func=cmd_list)
