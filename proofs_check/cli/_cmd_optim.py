"""``--optimizer`` for ``softpolar derive`` and ``softpolar simulate``: the optimizer as a third definition.

* ``derive --optimizer NAME``: both forms of the optimizer and its proven facts
  (:func:`theorems.optimizers.derive_facts`), each proof's status, negative controls shown as disproved;
* ``simulate --optimizer NAME [--lr LR] [--form discrete|continuous] [--opt NAME=VALUE ...]``: the discrete form
  (default when ``--lr`` is given: ``round(t_end / lr)`` steps, numpy or torch float64 or mpmath) or the continuous
  form (numpy DOP853 or mpmath GBS; a discontinuous flow through the Filippov engine, which reports its crossings
  and sliding segments or refuses with the reason).

A user optimizer comes from a ``--models`` file (a module-level :class:`theorems.Optimizer`), as links do.
"""
from __future__ import annotations
import json

from theorems import InvalidArgument, get_link, get_loss
from theorems import optimizers as O
from numerics import default_record, prepare_times
from numerics.optim import filippov_flow, optimizer_descent, optimizer_flow, steps_for
from theorems.asymptotics import asymptotics


def add_optimizer_argument(parser, *, simulate: bool) -> None:
    """Declare ``--optimizer`` (and, for simulate, ``--lr``, ``--form``, ``--opt``) on ``parser``."""
    parser.add_argument("--optimizer", metavar="NAME",
                        help="an optimizer: gd, ngd, sign, adam, rmsprop, muon, or one from --models "
                             "(theorems.Optimizer)")
    if simulate:
        parser.add_argument("--lr", type=float, help="learning rate of the optimizer's discrete form (t = lr k); "
                                                     "also the time scale of a continuous form that has one (adam)")
        parser.add_argument("--form", choices=("discrete", "continuous"),
                            help="with --optimizer: the discrete form (default when --lr is given) or the ODE")
        parser.add_argument("--opt", action="append", metavar="NAME=VALUE",
                            help="an optimizer parameter, e.g. --opt beta1=0.8 --opt eps=1e-10 (repeatable)")


def parse_opts(items) -> dict:
    """``["beta1=0.8", ...]`` -> ``{"beta1": 0.8}``; one line naming the bad item otherwise."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InvalidArgument(f"--opt {item!r}: expected NAME=VALUE, e.g. --opt beta1=0.8")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise InvalidArgument(f"--opt {item!r}: {value!r} is not a number; expected NAME=VALUE with a "
                                  "number") from None
    return out


def derive_optimizer(args) -> str:
    """The text of ``derive --optimizer NAME``: the forms and the facts, with proof statuses; with
    ``--asymptotics [--json]``, the rate law derived for the optimizer (:func:`derive_optimizer_laws`)."""
    opt = O.get_optimizer(args.optimizer)
    if getattr(args, "asymptotics", False) or getattr(args, "json", False):
        return derive_optimizer_laws(args, opt)
    lines = [f"# optimizer {opt.name} (provenance {opt.provenance})", "", f"$${opt.latex}$$", ""]
    hyper = ", ".join(f"{s} = {v}" for s, v in opt.hyper.items())
    if hyper:
        lines += [f"parameters (defaults; --opt NAME=VALUE): {hyper}", ""]
    for label, statement, proof in O.derive_facts(opt, n=min(max(args.n, 2), 6)):
        status = "" if proof is None else f"  [{proof.status}{', ' + proof.method if proof.method else ''}]"
        lines.append(f"- {label}: {statement}{status}")
        if proof is not None and proof.status == "disproved" and proof.counterexample:
            point = ", ".join(f"{k} = {v}" for k, v in list(proof.counterexample.items())[:6])
            lines.append(f"    counterexample: {point}")
    lines += ["", "Derived for this project [D]: not statements of the paper, which studies gradient flow only."]
    return "\n".join(lines) + "\n"


def derive_optimizer_laws(args, opt) -> str:
    """``derive --optimizer NAME --asymptotics [--json] [--loss S] [--link L]``: the law of
    :func:`theorems.asymptotics.optimizer_rate_law` (exponent, constant, clock and the derivation's steps), or the
    step that did not hold; JSON: the entries under ``asymptotics`` as ``derive --asymptotics --json`` writes them."""
    if not getattr(args, "asymptotics", False):
        raise InvalidArgument("--json is only used with --asymptotics; expected derive --optimizer NAME "
                              "--asymptotics --json")
    L, K = get_loss(args.loss or "logistic"), get_link(args.link or "softmax")
    laws = asymptotics(L, K, optimizer=opt)
    if getattr(args, "json", False):
        return json.dumps({"loss": L.name, "link": K.name, "optimizer": opt.name,
                           "provenance": "D (derived here, not the paper's statement)", "asymptotics": laws},
                          indent=2) + "\n"
    clock = {"log t": "(log t)^-p", "t": "t^-p", "exp t": "exp(-p t)"}
    lines = [f"# Asymptotic laws under optimizer {opt.name}: {L.name} loss, {K.name} link [D: derived here]"]
    for e in laws:
        if e["exponent"] is None:
            lines.append(f"- {e['quantity']}: no law derived ({e['no_law']})")
            continue
        const = e["constant"] if e["constant"] is not None else f"not an expression in n, b ({e['no_constant']})"
        lines.append(f"- {e['quantity']} ~ C {clock[e['clock']]} with p = {e['exponent']}, C = {const}")
        lines += [f"    {step}" for step in e["derivation"]]
    return "\n".join(lines) + "\n"


def check_unused(args) -> None:
    """Refuse the optimizer's options without ``--optimizer`` and the flow's options that it would drop."""
    if args.optimizer is None:
        for flag in ("lr", "form", "opt"):
            if getattr(args, flag) is not None:
                raise InvalidArgument(f"--{flag} is given without --optimizer; expected --optimizer NAME (plain "
                                      "gradient descent: --gd-lr)")
        return
    if args.gd_lr is not None:
        raise InvalidArgument("--gd-lr with --optimizer is not allowed; expected --optimizer gd --lr LR")
    if args.clock != "auto" or args.device != "cpu":
        raise InvalidArgument("--clock and --device have no effect with --optimizer (the optimizer engines run "
                              "in t on the CPU); expected to leave them out")


def run_optimizer(args, problem, times):
    """Run the optimizer's discrete or continuous form for ``simulate``; returns a :class:`numerics.Trajectory`."""
    opt = O.get_optimizer(args.optimizer)
    hyper = parse_opts(args.opt)
    O.hyper_values(opt, hyper)  # names and values checked before anything runs
    form = args.form or ("discrete" if args.lr is not None else "continuous")
    if args.lr is not None and not args.lr > 0:
        raise InvalidArgument(f"--lr={args.lr!r} is not allowed; expected a number > 0")
    if form == "discrete":
        if args.lr is None:
            raise InvalidArgument("--form discrete needs --lr; expected --lr LR (t = lr * k)")
        backend = "numpy" if args.backend == "auto" else args.backend
        if backend not in ("numpy", "torch", "mpmath"):
            raise InvalidArgument(f"--backend={backend!r} is not allowed with the discrete form; expected numpy, "
                                  "torch or mpmath")
        tv = [float(s) for s in prepare_times(args.t_end, times or ["0", args.t_end])]
        steps = steps_for(tv[-1], args.lr)
        cap = args.max_steps if args.max_steps is not None else 10**7
        if steps > cap:
            raise InvalidArgument(f"--t-end={args.t_end} with --lr={args.lr!r} is {steps} steps; expected at most "
                                  f"--max-steps={cap}")
        if times is None:
            record = default_record(steps)
        else:
            record = [steps_for(t, args.lr) for t in tv]
            if len(set(record)) != len(record):
                raise InvalidArgument(f"--times name the same step twice with --lr={args.lr!r}; expected distinct "
                                      "multiples of --lr")
        return optimizer_descent(problem, opt, lr=args.lr, steps=steps, record=record, hyper=hyper,
                                 backend=backend, dps=args.dps)
    tstr = prepare_times(args.t_end, times)
    kw = {} if args.max_steps is None else {"max_steps": args.max_steps}
    if not opt.smooth:
        if args.backend not in ("auto", "numpy"):
            raise InvalidArgument(f"--backend={args.backend!r} is not allowed for the discontinuous flow of "
                                  f"{opt.name!r}; expected numpy (the Filippov engine is float64)")
        return filippov_flow(problem, opt, times=tstr, hyper=hyper, lr=args.lr,
                             **({"rtol": args.rtol} if args.rtol is not None else {}))
    backend = "mpmath" if args.backend == "auto" else args.backend
    if backend not in ("numpy", "mpmath"):
        raise InvalidArgument(f"--backend={backend!r} is not allowed with the continuous form of an optimizer; "
                              "expected numpy or mpmath")
    return optimizer_flow(problem, opt, times=tstr, hyper=hyper, lr=args.lr, backend=backend, dps=args.dps,
                          rtol=args.rtol, atol=args.atol, **kw)
