"""``softpolar simulate``: integrate one flow and print / save / plot the trajectory.

::

    softpolar simulate (--init FILE | --seed S --d D --n N [--v-scale ..] [--a0 ..] [--a-scale ..]
                        [--kappa K] | --preset NAME) --loss L [--link K] --t-end T
                       [--times t1,t2,..] [--backend auto|mpmath|numpy|torch|taylor] [--dps P]
                       [--device cpu|cuda] [--clock auto|t|tau|log] [--rtol R] [--atol A]
                       [--max-steps N] [--gd-lr LR] [--json] [--out FILE] [--plot FILE.png] [--quiet]

``--json`` prints one JSON object on stdout: ``times`` and, aligned with it, ``a``,
``weights``, ``loss``, ``entropy``, ``max_weight``, ``argmax``, ``one_minus_max``, ``V``
(``tau`` for the tau clock), plus ``meta`` (backend, clock, method, steps, freezing, argv,
version) and ``problem``; ``V`` ($d\times n$ numbers at each time, the bulk of a large run) only with
``--full-json`` (else ``meta.left_out`` says it was left out). mpmath numbers are decimal strings with
``--dps`` digits. Without ``--json`` a short table is printed. ``--out FILE.npz`` writes every array,
``V`` included, in NumPy's binary ``.npz`` (:mod:`numerics.integrate._npz`: about the arrays' own bytes; read it with
``numpy.load`` or ``softpolar.load_trajectory``); ``--out`` with another name writes the JSON atomically (its key
``softpolar_output`` marks it as softpolar's: an existing ``--out`` or ``--plot`` file is replaced only when
softpolar wrote it, and never when it is an input, ``--init`` or ``--models``); with ``--out`` stdout gets one
line (the file, the output times, the engine, the leading token at the last time), not a copy of the file: the
JSON goes to stdout only when it has no file to go to (``--json`` without ``--out``, or with an ``.npz`` one);
``--plot`` draws weights and entropy against t (log axis, matplotlib Agg). A progress bar
goes to stderr unless ``--quiet``. ``--gd-lr`` runs gradient descent with that step
instead of the flow (t = lr * k; times are rounded to whole steps).

Exit codes: 0 success, 1 integration failure (one line on stderr), 2 bad input.
"""
from __future__ import annotations

import json
import os
import sys
import mpmath

from theorems import InvalidArgument, LOSSES, builtin_link_names, setup_deadline

import numerics
from numerics import DEFAULT_GD_MAX_STEPS
from theorems import __version__
from numerics.io import OWN_KEY, check_output_file, same_path, write_json_atomic

from ._cmd_optim import add_optimizer_argument, check_unused, run_optimizer
from ._models_cli import add_models_argument



def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate", help="integrate the gradient flow of one initial condition",
        description="Integrate the gradient flow of L(V phi(a)) from one initial condition and "
                    "report weights, entropy, loss at the requested times.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--init", metavar="FILE", help="JSON initial condition (loss, link, V, a, target, X)")
    src.add_argument("--seed", type=int, help="draw V, a, target with numpy RandomState(seed)")
    src.add_argument("--preset", help="one of the authors' toy settings: logistic-toy, comparison, "
                                      "conditioning, kl-toy")
    p.add_argument("--d", type=int, help="output dimension (with --seed)")
    p.add_argument("--n", type=int, help="number of tokens (with --seed)")
    p.add_argument("--v-scale", type=float, default=0.1, help="scale of V(0) (default 0.1)")
    p.add_argument("--a0", default="zero", help="initial logits: zero | noise | ones_noise")
    p.add_argument("--a-scale", type=float, default=0.1, help="noise scale of a(0) (default 0.1)")
    p.add_argument("--kappa", type=float, help="square loss: design X with condition number kappa")
    p.add_argument("--loss", help="logistic | square | kl (required with --seed)")
    p.add_argument("--link", help="link (default softmax): " + ", ".join(builtin_link_names())
                   + " (Scalable-Softmax for N tokens), or a link from --models")
    p.add_argument("--freeze", action="append", metavar="PARAM",
                   help="hold a parameter fixed: V (all values: a bandit), a (all logits), V[j] / a[j] (token j, "
                        "counted from 0; a sink token: --freeze 'V[0]' --freeze 'a[0]'); repeatable")
    add_models_argument(p)
    p.add_argument("--t-end", required=True, help="final time, e.g. 1e100")
    p.add_argument("--times", help="comma-separated output times (default: 0 and 39 log-spaced)")
    p.add_argument("--backend", default="auto",
                   help="auto | mpmath | numpy | torch | taylor (default auto: taylor when heyoka is "
                        "installed and the flow suits it, else mpmath; the output records which ran)")
    p.add_argument("--dps", type=int, help=f"decimal digits for mpmath / taylor (default {DEFAULT_DPS}); refused "
                                           "with the float64 backends numpy and torch")
    p.add_argument("--device", default="cpu", help="torch device: cpu | cuda (default cpu)")
    p.add_argument("--clock", default="auto", help="auto | t | tau | log")
    p.add_argument("--rtol", type=float, help="local relative tolerance")
    p.add_argument("--atol", type=float, help="local absolute tolerance")
    p.add_argument("--max-steps", type=int, help="accepted steps allowed (also bounds --gd-lr runs: "
                                                 f"default {DEFAULT_GD_MAX_STEPS} there)")
    p.add_argument("--gd-lr", type=float, help="run gradient descent with this step instead")
    add_optimizer_argument(p, simulate=True)
    p.add_argument("--json", action="store_true",
                   help="print one JSON object on stdout (with --out FILE.json it goes to the file, and stdout "
                        "gets one line naming it)")
    p.add_argument("--out", metavar="FILE", help="write the result to FILE (atomically): FILE.npz holds every "
                                                 "array in binary (V at each output time included), any other "
                                                 "name the JSON; stdout then gets one summary line")
    p.add_argument("--full-json", action="store_true",
                   help="JSON (--json, --out FILE.json) also carries V at every output time (d*n numbers per time; "
                        "for large problems prefer --out FILE.npz)")
    p.add_argument("--plot", metavar="FILE.png", help="plot weights and entropy against t")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_simulate)


def _problem(args):
    p = _problem_unfrozen(args)
    if args.freeze:
        p = p.with_frozen(tuple(p.frozen) + tuple(args.freeze))
    return p


def _problem_unfrozen(args):
    if args.init is not None:
        for flag in ("d", "n", "kappa"):
            if getattr(args, flag) is not None:
                raise InvalidArgument(f"--{flag} is not allowed with --init; the file fixes the problem")
        p = numerics.Problem.from_json(args.init)
        for flag in ("loss", "link"):
            given = getattr(args, flag)
            if given is not None and given != getattr(p, flag):
                raise InvalidArgument(f"--{flag}={given!r} contradicts the init file's "
                                      f"{flag}={getattr(p, flag)!r}; expected to omit it or match")
        return p
    link = args.link or "softmax"
    if args.preset is not None:
        return numerics.Problem.preset(args.preset, loss=args.loss, link=link, kappa=args.kappa)
    if args.loss is None:
        raise InvalidArgument("--loss is required with --seed; expected one of " + ", ".join(sorted(LOSSES)))
    for flag in ("d", "n"):
        if getattr(args, flag) is None:
            raise InvalidArgument(f"--{flag} is required with --seed; expected an integer >= 1")
    return numerics.Problem.from_seed(args.seed, d=args.d, n=args.n, loss=args.loss, link=link,
                             v_scale=args.v_scale, a0=args.a0, a_scale=args.a_scale, kappa=args.kappa)


def _times(text):
    if text is None:
        return None
    items = [s.strip() for s in text.split(",")]
    if not items or any(not s for s in items):
        raise InvalidArgument(f"--times={text!r} is not allowed; expected comma-separated numbers")
    return items


#: decimal digits of mpmath and taylor runs when --dps is not given
DEFAULT_DPS = 30
#: what the refusals of gradient descent's time policy (:func:`numerics.gd_iterates`) call its arguments here
GD_OPTION_NAMES = {"lr": "--gd-lr", "t_end": "--t-end", "times": "--times", "max_steps": "--max-steps"}


def _ignored(args) -> None:
    """Refuse options that would have no effect on this run (they were accepted and silently dropped)."""
    if args.dps is not None and args.backend in ("numpy", "torch"):
        raise InvalidArgument(f"--dps={args.dps!r} has no effect with --backend={args.backend} (float64); expected "
                              "--backend mpmath, taylor or auto, or no --dps")
    if args.gd_lr is not None:
        dropped = [f"--{name.replace('_', '-')}" for name, default in (("rtol", None), ("atol", None),
                                                                       ("clock", "auto"), ("device", "cpu"))
                   if getattr(args, name) != default]
        if dropped:
            raise InvalidArgument(f"{', '.join(dropped)} {'has' if len(dropped) == 1 else 'have'} no effect with "
                                  f"--gd-lr={args.gd_lr!r} (gradient descent takes fixed steps of size lr on "
                                  "the CPU); expected to leave them out")
    if args.dps is None:
        args.dps = DEFAULT_DPS


#: ``--backend auto`` takes a float64 backend above this many entries n * d (issue 39: at n = d = 256 auto compiled
#: the Taylor flow for 25 min and 21 GB). Measured on this project's 2-core machine, ``--loss logistic --link softmax
#: --t-end 100``: auto (taylor) n = d = 32 in 4.6 s / 0.28 GB, 64 in 16 s / 0.41 GB, 128 in 95 s / 0.92 GB;
#: numpy n = d = 256 in 3.8 s / 0.20 GB. The Taylor compile grows faster than n * d, so the cut sits at 64 x 64.
AUTO_MAX_ENTRIES = 64 * 64


def _auto_for_size(args, problem) -> str | None:
    """``--backend auto`` on a large problem: numpy (float64, scales), with a note saying why; refused when a
    precision was asked for with ``--dps``, which only the high-precision backends honour."""
    if args.backend != "auto" or args.gd_lr is not None or args.optimizer is not None:
        return None
    size = problem.n * problem.d
    if size <= AUTO_MAX_ENTRIES:
        return None
    if args.dps is not None:
        raise InvalidArgument(f"--backend auto with --dps={args.dps} at n * d = {size} (n = {problem.n}, d = "
                              f"{problem.d}) needs the high-precision Taylor/GBS engine, which does not scale past "
                              f"n * d = {AUTO_MAX_ENTRIES} (n = d = 128 already takes 95 s and 0.9 GB); expected "
                              "--backend numpy or torch without --dps, or --backend taylor or mpmath to insist")
    args.backend = "numpy"
    return (f"backend auto -> numpy: n * d = {size} > {AUTO_MAX_ENTRIES}, where the high-precision engines do not "
            "scale (float64; --backend taylor or mpmath to insist)")


def _run(args, problem):
    check_unused(args)
    note = _auto_for_size(args, problem)
    if note and not args.quiet:
        print(f"softpolar simulate: {note}", file=sys.stderr)
    _ignored(args)
    times = _times(args.times)
    if args.optimizer is not None:
        return run_optimizer(args, problem, times)
    if args.gd_lr is not None:
        if args.backend == "auto":  # gradient descent has no taylor path: auto means mpmath here
            args.backend = "mpmath"
        if args.backend not in ("numpy", "mpmath"):
            raise InvalidArgument(f"--backend={args.backend!r} is not allowed with --gd-lr; expected "
                                  "numpy or mpmath")
        # the policy (times -> iterates, the step cap) is the engine's: numerics.gd_iterates
        record, cap = numerics.gd_iterates(args.gd_lr, args.t_end, times, max_steps=args.max_steps,
                                           names=GD_OPTION_NAMES)
        return numerics.gradient_descent(problem, lr=args.gd_lr, steps=record[-1], record=record,
                                         backend=args.backend, dps=args.dps, progress=not args.quiet,
                                         max_steps=max(cap, record[-1]))
    kw = {}
    if args.max_steps is not None:
        kw["max_steps"] = args.max_steps
    traj = numerics.simulate(problem, t_end=args.t_end, times=times, backend=args.backend, dps=args.dps,
                             rtol=args.rtol, atol=args.atol, device=args.device, clock=args.clock,
                             progress=not args.quiet, **kw)
    if note:
        traj.notes.append(note)
    return traj


def plot(traj, path: str) -> None:
    """Weights and entropy against t on a log axis: :meth:`numerics.Trajectory.plot`."""
    try:
        traj.plot(path)
    except InvalidArgument as exc:
        raise InvalidArgument(f"--plot: {exc}") from None


def _table(traj) -> str:
    def fmt(x):
        return mpmath.nstr(x, 10) if isinstance(x, mpmath.mpf) else f"{float(x):.10g}"

    lines = [f"{'t':>16} {'loss':>18} {'entropy':>18} {'max weight':>18} argmax"]
    for t, L, H, M, i in zip(traj.times, traj.loss, traj.entropy, traj.max_weight, traj.argmax):
        lines.append(f"{fmt(t):>16} {fmt(L):>18} {fmt(H):>18} {fmt(M):>18} {i:>6}")
    lines.append(f"# {traj.backend} / {traj.method}, clock {traj.clock}, {traj.n_steps} steps")
    lines.extend(f"# {note}" for note in traj.notes)
    return "\n".join(lines)


def cmd_simulate(args) -> int:
    # every output is checked before anything is computed: writable, not a folder, not an input (--init and
    # every --models file), and either new or a file softpolar wrote
    inputs = [args.init, *(getattr(args, "models", None) or ())]
    if args.out is not None:
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise InvalidArgument(f"--out={args.out!r}: folder {folder!r} does not exist")
        check_output_file("--out", args.out, inputs=inputs)
    if args.plot is not None:
        if not args.plot.lower().endswith(".png"):
            raise InvalidArgument(f"--plot={args.plot!r} is not allowed; expected a .png file name")
        check_output_file("--plot", args.plot, inputs=inputs)
        if args.out is not None and same_path(args.out, args.plot):
            raise InvalidArgument(f"--plot={args.plot!r} is the same file as --out; expected two "
                                  "different files")
    if args.max_steps is not None and args.max_steps < 1:
        raise InvalidArgument(f"--max-steps={args.max_steps} is not allowed; expected an integer >= 1")

    with setup_deadline(args.setup_timeout, "simulate (building the problem from its definitions)"):
        problem = _problem(args)
    try:
        traj = _run(args, problem)
    except numerics.IntegrationError as exc:
        print(f"softpolar: integration failed: {exc}", file=sys.stderr)
        return 1
    record = {"argv": ["softpolar", *sys.argv[1:]], "softpolar_version": __version__,
              "seed": args.seed, "preset": args.preset, "init": args.init}
    if args.optimizer is not None:  # the optimizer's report: its name and, for a discontinuous flow, the events
        record.update({"optimizer": args.optimizer, "switching": getattr(traj, "switching", None)})
    npz = args.out is not None and args.out.lower().endswith(".npz")
    if npz:
        numerics.save_trajectory(traj, args.out, meta=record)
    data = None
    if args.json or (args.out is not None and not npz):
        # the key marks the file as softpolar's
        data = {OWN_KEY: "simulate", **traj.to_json_dict(full_precision=True, include_V=args.full_json)}
        data["meta"].update(record)
    if args.out is not None and not npz:
        write_json_atomic(args.out, data)
    if args.plot is not None:
        plot(traj, args.plot)
    if args.json and (args.out is None or npz):  # the JSON has no file to go to: stdout is the JSON alone
        json.dump(data, sys.stdout)
        sys.stdout.write("\n")
    elif args.out is not None:  # the arrays are in the file: one line says where and what, not a copy of it
        print(_summary_line(traj, args.out))
    else:
        print(_table(traj))
    return 0


def _summary_line(traj, out: str) -> str:
    """One line for stdout when ``--out`` holds the run: the file, the times, the engine and the last state
    (the leading token counted from 0, as everywhere: ``argmax``)."""
    def fmt(x):
        return mpmath.nstr(x, 6) if isinstance(x, mpmath.mpf) else f"{float(x):.6g}"

    return (f"wrote {out}: {len(traj.times)} output times to t = {fmt(traj.times[-1])}, {traj.backend} / "
            f"{traj.method}, {traj.n_steps} steps; at the last time token {int(traj.argmax[-1])} leads with "
            f"weight {fmt(traj.max_weight[-1])}")
