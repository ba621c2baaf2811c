r"""Computer-assisted proofs that a given initialization polarizes, and their checker.

A certificate for token $i$ consists of

1. the initial condition (decimal strings, as given), converted *exactly* to
   rationals: $u(0)=V^\top w$ and $b=\|w\|^2$ in exact rational arithmetic, then
   one outward rounding to arb balls;
2. a validated enclosure of the tau-system ($\star$) (:mod:`numerics.validated.enclosure`)
   on $[0,\tau^*]$: for every step the exact dyadic step size, the a-priori box
   and the end enclosure;
3. at $\tau^*$: lower bounds $a_i-a_j\ge L^a_j>0$ and $u_i-u_j\ge L^u_j\ge0$ for all
   $j\ne i$, i.e. the enclosure lies in $R_i^+=\{u_i\ge u_j,\ a_i>a_j\}$.

By the trapping-region lemma (:mod:`theorems.trapping`, [D]) the solution then
stays in $R_i^+$, all gaps $a_i-a_j\to\infty$, and $\sigma(a(t))\to e_i$ as
$t\to\infty$ (the clock $\tau(t)\to\infty$ for the logistic loss).

:func:`check_certificate` re-verifies a certificate without trusting anything in
it except as a claim. The mathematics is re-proven by an **independent checker**
(:mod:`numerics.validated.certcheck`: another formulation, another enclosure method, no code
shared with :mod:`numerics.validated.enclosure`), so a bug in the certifier's Taylor code
cannot pass both; by default the recorded steps are also replayed with the
certifier's own method (recomputes $u(0), b$, re-checks every a-priori inclusion and
every end enclosure). Every display field (``token``, ``conclusion``,
``tau_star_decimal``, the ``*_decimal`` bounds, ``system``, ``lemma``,
``evidence``, ``lemma_steps``) is re-derived from the verified exact numbers and a
mismatch rejects the certificate. The SHA-256 digest only detects accidental edits:
the mathematics and the re-derivation are what reject a wrong certificate.

What a certificate rests on (``evidence``, ``lemma_steps`` in it): interval
arithmetic plus the trapping lemma, whose sign facts are proven with SymPy and whose
continuation/divergence steps are proven in Coq (:mod:`theorems.coq`); global existence of the
solution after $\tau^*$ is the one assumed step (a named Coq axiom). ``softpolar certify --coq``
writes the Coq file that closes one certificate.

The paper proves polarization only from a uniform $a(0)$ with strictly ordered
projections ([A], paper-notes#logistic); certificates need neither.
"""
from __future__ import annotations

import decimal
import functools
import json
import math
import os
import time
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
import numpy as np

from theorems import InvalidArgument, __version__, check_int, same_link, same_loss
from theorems.errors import show
from numerics import Problem, flow_rhs

from .. import io as _io
from . import enclosure as V
from .certcheck import READ_ERRORS, Reject, independent_check, parse_dyadic
from ..io import canonical_json, content_digest, parse_rational, read_json

FORMAT = "softpolar-polarization-certificate"
#: version 2: ``evidence`` and ``lemma_steps`` fields; every display field is re-derived by the checker.
#: version 3: the lemma's analytic steps are proven in Coq (``lemma_steps`` say so; global existence assumed).
#: version 4: tokens are counted from 0 in the display fields too (``token`` equals ``winner``, ``conclusion``
#: says e_i of that token), as in every other output; version 3 (``token`` = winner + 1) is still read and checked
#: with its own display fields (issue 39).
VERSION = 4
#: the versions :func:`check_certificate` reads; any other is refused in one line naming these
READ_VERSIONS = (3, 4)
#: Default largest internal time searched.
DEFAULT_TAU_MAX = Fraction(50)
#: Limits accepted from a certificate (a checker must not be made to run forever).
MAX_PREC, MAX_ORDER = 4096, 80
#: seconds ``certify --check`` gives a certificate by default (``--time-budget`` changes it): the slowest
#: certificate of the CERT family (n = 8, 74 steps) checks in about 1.5 s on this project's shared machine, so
#: ten minutes refuses nothing genuine of that size and still ends the check of a huge or doctored certificate
DEFAULT_CHECK_TIME_BUDGET = 600.0
#: Largest |decimal exponent| accepted in an initial condition, and most characters of one number:
#: every exact integer then stays far below Python's 4300-digit int-to-string limit, so the
#: certificate (exact decimal and dyadic strings) can always be written and re-read, and
#: u = V^T w, b = |w|^2 and the gap bounds (products of two inputs) stay inside the float
#: range of the displayed ``*_decimal`` fields.
MAX_DECIMAL_EXPONENT = 150
MAX_DECIMAL_CHARS = 1000
#: most numbers in an initial-condition file (counted on its bytes before it is parsed)
MAX_INIT_NUMBERS = 10**6

LEMMA = ("theorems.trapping (trapping-region lemma, [D]): R_i^+ = {u_i >= u_j, a_i > a_j for all j != i} "
         "is forward invariant for du/dtau = b s, da/dtau = J(s) u, and inside it a_i - a_j -> infinity, "
         "so softmax(a) -> e_i; tau(t) -> infinity for the logistic loss.")
#: The system text recorded in a certificate.
SYSTEM = "du/dtau = b*s, da/dtau = (diag(s) - s s^T) u, s = softmax(a); u = V^T w, b = |w|^2"
#: What a certificate's conclusion rests on (recorded in it; the checker requires these exact texts).
EVIDENCE = ("interval arithmetic (arb-ball enclosure of the tau-system, re-verified by an independent "
            "checker) + trapping-region lemma (machine-checked in Coq; global existence assumed, see lemma_steps)")
#: How each step of the lemma is established (theorems.trapping; recorded in every certificate).
LEMMA_STEPS = {
    "sign facts on R_i and R_i^+ (gap derivatives >= 0, d/dtau (u_i - u_j) > 0 when a_i > a_j, n s_i >= 1, "
    "d/dtau (a_i - a_j) >= s_j (u_i - u_j))":
        "proved with SymPy sign certificates, each case split written out (theorems.trapping.check_strict_region)",
    "forward invariance of R_i^+ (continuation from the sign facts)":
        "proved in Coq (theorems/coq, Trapping.invariance)",
    "divergence a_i - a_j -> infinity inside R_i^+": "proved in Coq (theorems/coq, Trapping.divergence)",
    "tau(t) -> infinity for the logistic loss": "proved in Coq (theorems/coq, Trapping.logistic_clock_diverges)",
    "global existence of the solution after tau*": "assumed: the one Coq axiom reduced_flow_global_existence "
                                                   "(linear growth bounds; argued by hand in theorems.trapping)",
}


# ---------------------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------------------
def _decimal(argument: str, value, notes: list | None = None) -> str:
    """The exact decimal text of a JSON number or numeric string; raise InvalidArgument otherwise.

    A Python ``float`` is taken at its exact binary value (``Decimal(0.1)`` =
    0.1000000000000000055511151231257827021181583404541015625), and ``notes`` gets a line saying so.
    """
    if isinstance(value, float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise InvalidArgument(f"{argument}={value!r} is not allowed; expected a finite number")
        exact = Decimal(value)
        if notes is not None and exact != Decimal(repr(value)):
            notes.append(f"{argument}={value!r} is a Python float, taken at its exact binary value {exact}")
        value = format(exact, "f") if abs(exact.adjusted()) < 30 else str(exact)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InvalidArgument(f"{argument}={show(value)} is not allowed; expected a decimal number or string")
    if isinstance(value, str) and len(value) > MAX_DECIMAL_CHARS:
        raise InvalidArgument(f"{argument}={value[:40]!r}... ({len(value)} characters) is not allowed; "
                              f"expected a decimal number of at most {MAX_DECIMAL_CHARS} characters")
    if isinstance(value, int) and value.bit_length() > 3 * MAX_DECIMAL_CHARS:
        raise InvalidArgument(f"{argument}=<int of {value.bit_length()} bits> is not allowed; expected a "
                              f"decimal number of at most {MAX_DECIMAL_CHARS} characters")
    text = str(value).strip()
    if not text.isascii():  # Decimal reads fullwidth and Arabic-Indic digits as ASCII ones
        raise InvalidArgument(f"{argument}={value!r} is not allowed; expected a decimal number in ASCII digits")
    try:
        dec = Decimal(text)
    except InvalidOperation:
        raise InvalidArgument(f"{argument}={value!r} is not allowed; expected a decimal number") from None
    if not dec.is_finite():
        raise InvalidArgument(f"{argument}={value!r} is not allowed; expected a finite number")
    if dec != 0 and abs(dec.adjusted()) > MAX_DECIMAL_EXPONENT:
        raise InvalidArgument(f"{argument}={value!r} is not allowed; expected a decimal exponent within "
                              f"+-{MAX_DECIMAL_EXPONENT}")
    return text


def _fraction(text: str) -> Fraction:
    return Fraction(Decimal(text))


@dataclass(frozen=True)
class CertifyInput:
    """A validated logistic/softmax initial condition with its numbers kept as decimal strings."""

    V: tuple
    a: tuple
    target: tuple
    notes: tuple = ()  # how inputs were read (Python floats at their exact binary value)

    @property
    def n(self) -> int:
        return len(self.a)

    @property
    def d(self) -> int:
        return len(self.target)

    def exact(self) -> tuple[list[Fraction], list[Fraction], Fraction]:
        r"""Exact rationals $(u(0), a(0), b)$ with $u=V^\top w$, $b=\|w\|^2$."""
        w = [_fraction(x) for x in self.target]
        Vq = [[_fraction(x) for x in row] for row in self.V]
        u = [sum((Vq[k][j] * w[k] for k in range(self.d)), Fraction(0)) for j in range(self.n)]
        a = [_fraction(x) for x in self.a]
        b = sum((x * x for x in w), Fraction(0))
        return u, a, b

    def to_json(self) -> dict:
        return {"loss": "logistic", "link": "softmax", "V": [list(r) for r in self.V],
                "a": list(self.a), "target": list(self.target)}


def parse_init(obj) -> CertifyInput:
    """Validate an initial-condition object for certification: a dict (the init-file format) or a
    :class:`numerics.Problem`.

    Numbers may be JSON numbers, decimal strings or Python floats (taken at their exact binary value,
    noted in :attr:`CertifyInput.notes`); they are kept as text and converted exactly. Only the
    logistic loss with the softmax link (by definition, under any registered name) is certifiable;
    ``X`` must be absent.
    """
    if isinstance(obj, Problem):
        if obj.frozen:
            raise InvalidArgument(f"frozen={obj.frozen} is not allowed; the certifier encloses the full flow")
        obj = obj.to_json_dict()
    if not isinstance(obj, dict):
        raise InvalidArgument(f"init={type(obj).__name__} is not allowed; expected a JSON object")
    unknown = set(obj) - {"loss", "link", "V", "a", "target", "X", "comment", "seed"}
    if unknown:
        raise InvalidArgument(f"init keys {sorted(map(show, unknown))} are not allowed; expected loss, link, V, "
                              "a, target")
    if not isinstance(obj.get("loss"), str) or not same_loss(obj["loss"], "logistic"):
        raise InvalidArgument(f"loss={show(obj.get('loss'))} is not allowed; certify handles only 'logistic' "
                              "(the logistic loss, under any name)")
    if not isinstance(obj.get("link", "softmax"), str) or not same_link(obj.get("link", "softmax"), "softmax"):
        raise InvalidArgument(f"link={show(obj.get('link'))} is not allowed; certify handles only 'softmax' "
                              "(the softmax definition, under any name)")
    if obj.get("X") is not None:
        raise InvalidArgument("X is not allowed with loss='logistic'; expected no design matrix")
    for key in ("V", "a", "target"):
        if key not in obj:
            raise InvalidArgument(f"init has no {key!r}; expected keys loss, link, V, a, target")
    a, target, Vm = obj["a"], obj["target"], obj["V"]
    if not isinstance(a, list) or len(a) < 2:
        raise InvalidArgument(f"a={show(a)} is not allowed; expected a list of n >= 2 numbers")
    n = len(a)
    if not isinstance(target, list) or len(target) < 1:
        raise InvalidArgument(f"target={show(target)} is not allowed; expected a list of d >= 1 numbers")
    d = len(target)
    if not isinstance(Vm, list) or len(Vm) != d or any(not isinstance(r, list) or len(r) != n for r in Vm):
        raise InvalidArgument(f"V with shape {_shape(Vm)} is not allowed; expected {d} rows (len(target)) "
                              f"of {n} numbers (len(a))")
    notes: list = []
    a_s = tuple(_decimal(f"a[{j}]", x, notes) for j, x in enumerate(a))
    t_s = tuple(_decimal(f"target[{k}]", x, notes) for k, x in enumerate(target))
    V_s = tuple(tuple(_decimal(f"V[{k}][{j}]", x, notes) for j, x in enumerate(row)) for k, row in enumerate(Vm))
    if all(_fraction(x) == 0 for x in t_s):
        raise InvalidArgument(f"target={list(t_s)} is not allowed; expected a nonzero vector (b = |w|^2 > 0)")
    return CertifyInput(V_s, a_s, t_s, tuple(notes))


def _shape(x):
    if not isinstance(x, list):
        return type(x).__name__
    return f"{len(x)} rows of lengths {sorted({len(r) if isinstance(r, list) else -1 for r in x})}"


def load_init(path) -> CertifyInput:
    """Read and validate an initial-condition JSON file (numbers read as exact decimals)."""
    obj = read_json(path, "init", parse_float=str, parse_int=str,  # exact decimals, counted first
                    max_numbers=MAX_INIT_NUMBERS)
    return parse_init(obj)


# ---------------------------------------------------------------------------------------
# the region test
# ---------------------------------------------------------------------------------------
def _fraction_of(x) -> Fraction:
    """The exact value of an exact arb (an endpoint)."""
    m, e = x.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


@dataclass(frozen=True)
class RegionTest:
    """Outcome of testing whether an enclosure lies in $R_i^+$ (``inside``) and the bounds found."""

    winner: int
    inside: bool
    a_lower: tuple
    u_lower: tuple
    undecided: tuple


#: significant bits of the stored gap margins (:func:`.enclosure.round_down`)
MARGIN_BITS = 32


def gap_bound_holds(gap, bound: Fraction, *, strict: bool) -> bool:
    """The checker's test: ``bound > 0`` (or ``>= 0``) and ``gap - bound >= 0`` proven in ball arithmetic."""
    if (bound <= 0) if strict else (bound < 0):
        return False
    return bool((gap - V.arb_from_rational(bound)) >= 0)


def region_test(X) -> RegionTest:
    r"""Lower bounds of $a_i-a_j$ and $u_i-u_j$ over the enclosure, for the leading token $i$.

    ``inside`` iff every $a_i-a_j\ge L^a_j>0$ and every $u_i-u_j\ge L^u_j\ge0$ is
    proven, with the bounds $L$ = the ball's lower endpoint rounded down to 32
    bits (short numbers for the certificate, and a margin so that the checker's
    own ball subtraction reproduces the verdict: :func:`gap_bound_holds`). $i$
    is the largest $a$ midpoint (ties broken by $u$); the choice only affects
    which token is tried, never soundness.
    """
    n = len(X) // 2
    i = max(range(n), key=lambda k: (float(X[n + k].mid()), float(X[k].mid())))
    a_low, u_low, undecided = [], [], []
    for j in range(n):
        if j == i:
            a_low.append(None)
            u_low.append(None)
            continue
        ga, gu = X[n + i] - X[n + j], X[i] - X[j]
        la, lu = (V.round_down(_fraction_of(g.lower()), MARGIN_BITS) for g in (ga, gu))
        a_low.append(la)
        u_low.append(lu)
        if not gap_bound_holds(ga, la, strict=True):
            undecided.append(f"a_{i + 1} - a_{j + 1} in {ga.str(5, radius=True)}")
        if not gap_bound_holds(gu, lu, strict=False):
            undecided.append(f"u_{i + 1} - u_{j + 1} in {gu.str(5, radius=True)}")
    return RegionTest(i, not undecided, tuple(a_low), tuple(u_low), tuple(undecided))


# ---------------------------------------------------------------------------------------
# certify
# ---------------------------------------------------------------------------------------
@dataclass
class CertifyResult:
    """Outcome of :func:`certify`.

    ``status``: ``'certified'`` or ``'not certified'``; ``winner`` (0-based) and
    ``tau_star`` when certified; ``reason`` otherwise; ``certificate``: the JSON
    object (also for ``not certified``, with ``status`` recorded, which
    :func:`check_certificate` rejects).
    """

    status: str
    winner: int | None
    tau_star: Fraction | None
    reason: str
    steps: int
    seconds: float
    max_radius: float
    certificate: dict = field(repr=False, default_factory=dict)
    region: RegionTest | None = None

    def summary(self) -> dict:
        out = {"status": self.status, "steps": self.steps, "seconds": round(self.seconds, 3),
               "max_radius": self.max_radius}
        if self.status == "certified":
            out.update(winner=self.winner, token=self.winner, tau_star=float(self.tau_star),
                       tau_star_exact=V.dyadic_to_str(self.tau_star),
                       bounds=self.certificate["bounds"])
        else:
            out.update(reason=self.reason, tau_reached=self.certificate.get("tau_reached"))
            if self.region is not None:
                out["undecided"] = list(self.region.undecided)
        return out


def certificate_digest(cert: dict) -> str:
    """SHA-256 of the canonical bytes of the certificate without its digest (:func:`numerics.io.canonical_json`:
    the strict reader refuses duplicate keys, so these bytes are the one document every reader sees)."""
    return content_digest(canonical_json({k: v for k, v in cert.items() if k != "digest"}))


def _software() -> dict:
    flint = V._flint()

    return {"softpolar": __version__, "python-flint": getattr(flint, "__version__", "unknown")}


def certify(init: CertifyInput, *, tau_max=DEFAULT_TAU_MAX, prec: int = V.DEFAULT_PREC,
            order: int = V.DEFAULT_ORDER, max_steps: int = 20_000, time_budget: float | None = None,
            max_width: float = 1e-2, progress=None) -> CertifyResult:
    r"""Try to prove that the flow from ``init`` polarizes: enclose ($\star$) until it enters $R_i^+$.

    Returns ``certified`` with the certificate, or ``not certified`` with the
    reason (``tau-max reached``, ``enclosure too wide``, ``step underflow``,
    ``max steps``, ``time budget``) and the undecided gaps at the last time.
    """
    if not isinstance(init, CertifyInput):
        if not isinstance(init, (Problem, dict)):
            raise InvalidArgument(f"init={type(init).__name__} is not allowed; expected a CertifyInput (parse_init), "
                                  "a numerics.Problem or an init dict")
        init = parse_init(init)
    tau_max = _check_tau_max(tau_max)
    check_int("prec", prec, minimum=32)
    check_int("order", order, minimum=2)
    if prec > MAX_PREC or order > MAX_ORDER:
        raise InvalidArgument(f"prec={prec}, order={order}: expected prec <= {MAX_PREC}, order <= {MAX_ORDER}")
    u0, a0, b = init.exact()
    last = {}

    def stop(X, tau):
        last["test"] = region_test(X)
        return last["test"].inside

    enc = V.enclose(u0, a0, b, tau_max, prec=prec, order=order, max_width=max_width, max_steps=max_steps,
                    time_budget=time_budget, stop=stop, progress=progress)
    test = last.get("test")
    with V.arb_context(prec):
        cert = {
            "format": FORMAT, "version": VERSION,
            "system": SYSTEM,
            "lemma": LEMMA,
            "evidence": EVIDENCE,
            "lemma_steps": dict(LEMMA_STEPS),
            "init": init.to_json(),
            "prec": prec, "order": order,
            "b": enc.b_text,
            "initial": list(enc.initial_text),
            "steps": [{"h": V.dyadic_to_str(s.h), "box": list(s.box_text), "end": list(s.end_text)}
                      for s in enc.steps],
            "software": _software(),
        }
    tau = enc.tau
    if enc.status == "stopped" and test is not None and test.inside:
        i = test.winner
        cert.update(claim_fields(i, tau, test.a_lower, test.u_lower))
        cert["digest"] = certificate_digest(cert)
        return CertifyResult("certified", i, tau, "", len(enc.steps), enc.seconds, enc.max_radius(), cert, test)
    if enc.status == "complete":
        reason = f"tau-max reached: tau = {float(tau):.6g} and the enclosure is not inside any R_i^+"
    elif enc.status == "too wide":
        reason = f"enclosure too wide: {enc.reason}"
    else:
        reason = f"{enc.status}: {enc.reason}"
    cert.update({"status": "not certified", "reason": reason, "tau_reached": f"{float(tau):.10g}"})
    if test is not None:
        cert["undecided"] = list(test.undecided)
    cert["digest"] = certificate_digest(cert)
    return CertifyResult("not certified", None, None, reason, len(enc.steps), enc.seconds, enc.max_radius(),
                         cert, test)


def claim_fields(i: int, tau: Fraction, a_lower, u_lower) -> dict:
    """The claim part of a certificate: exact numbers and the display fields derived from them.

    Used by :func:`certify` to write them. The checker does not use it: the independent checker
    derives every display field in its own code (:func:`numerics.validated.certcheck.display_fields`).
    """
    return {
        "status": "certified", "winner": i, "token": i,
        "tau_star": V.dyadic_to_str(tau), "tau_star_decimal": f"{float(tau):.10g}",
        "bounds": {
            "a_gap_lower": [None if x is None else V.dyadic_to_str(x) for x in a_lower],
            "u_gap_lower": [None if x is None else V.dyadic_to_str(x) for x in u_lower],
            "a_gap_lower_decimal": [None if x is None else f"{float(x):.6g}" for x in a_lower],
            "u_gap_lower_decimal": [None if x is None else f"{float(x):.6g}" for x in u_lower],
        },
        "conclusion": f"softmax(a(t)) -> e_{i} as t -> infinity",
    }


#: every key of a recorded step (the checker rejects others).
STEP_KEYS = frozenset({"h", "box", "end"})
#: the ``software`` record: at most this many entries, each name and version printable ASCII of at most
#: ``SOFTWARE_CHARS`` characters (it is printed, as not checked, by ``--check``)
SOFTWARE_ENTRIES, SOFTWARE_CHARS = 16, 80
#: every key a certified certificate has (the checker rejects others).
CERT_KEYS = frozenset({"format", "version", "system", "lemma", "evidence", "lemma_steps", "init", "prec", "order",
                       "b", "initial", "steps", "software", "status", "winner", "token", "tau_star",
                       "tau_star_decimal", "bounds", "conclusion", "digest"})


def _check_tau_max(tau_max) -> Fraction:
    # the exponent is bounded before anything is expanded ('1e999999999' would build a billion digits)
    t = tau_max if isinstance(tau_max, Fraction) else parse_rational(
        "tau_max", tau_max, max_exponent=30, rational=False, expected="a number in (0, 1e6]")
    if not t > 0 or t > 10**6:
        raise InvalidArgument(f"tau_max={tau_max!r} is not allowed; expected a number in (0, 1e6]")
    return t


# ---------------------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckResult:
    """Outcome of :func:`check_certificate`: ``ok`` and, if not, the first failing item.

    Every value here that a caller prints is *derived from re-verified numbers*: ``winner``
    from the recorded winner whose region bounds were proven, ``tau_star`` (exact dyadic
    text) and ``tau_star_decimal`` from the sum of the re-verified steps, the bound texts from
    the proven exact bounds. ``independent``: the independent checker's summary
    (:mod:`numerics.validated.certcheck`); ``replay``: ``True`` if the recorded steps were also
    re-verified with the certifier's own method, ``None`` if skipped.
    """

    ok: bool
    reason: str
    steps_checked: int = 0
    seconds: float = 0.0
    winner: int | None = None
    tau_star: str | None = None
    tau_star_decimal: str | None = None
    bounds: dict | None = None
    independent: dict | None = None
    replay: bool | None = None
    #: what the certificate records that the checker does not (cannot) verify: field -> what it says
    not_checked: dict | None = None
    #: ``'who: Type: message'`` when the checkers' own code raised on a certificate they had read: ``ok`` is
    #: False (a crash never passes a certificate) and it is no refusal either (no finding about the certificate)
    crashed: str = ""

    def summary(self) -> dict:
        out = {"check": "passed" if self.ok else "failed", "steps_checked": self.steps_checked,
               "seconds": round(self.seconds, 3), "independent": self.independent, "replay": self.replay}
        if self.not_checked:
            out["not_checked"] = dict(self.not_checked)
        if self.crashed:
            out["crashed"] = self.crashed
        if self.ok:
            out.update(winner=self.winner, token=self.winner, tau_star=self.tau_star,
                       tau_star_decimal=self.tau_star_decimal, bounds=self.bounds,
                       conclusion=f"softmax(a(t)) -> e_{self.winner} as t -> infinity",
                       evidence=EVIDENCE, lemma_steps=dict(LEMMA_STEPS))
        else:
            out["reason"] = self.reason
        return out


class _Reject(Exception):
    pass


def _need(cond, why):
    if not cond:
        raise _Reject(why)


def _check_texts(cert) -> None:
    """The fixed texts a certificate carries must be this package's (what the checker relies on).

    The display fields derived from numbers (``token``, ``tau_star_decimal``, the bound texts,
    ``conclusion``) are re-derived and compared by the independent checker in its own code
    (:func:`numerics.validated.certcheck.display_fields`).
    """
    _need(cert.get("system") == SYSTEM, "system text differs from the certified system")
    _need(cert.get("lemma") == LEMMA, "lemma text differs from the lemma this checker relies on")
    _need(cert.get("evidence") == EVIDENCE, "evidence label differs from what this checker establishes")
    _need(cert.get("lemma_steps") == LEMMA_STEPS, "lemma_steps differ from how the lemma is established")


def _software_not_checked(cert) -> dict:
    """``{"software": text}``: the recorded versions, which no check can verify (they say what made the
    certificate, not what it proves), for the output's ``not checked`` line; refused unless well formed."""
    sw = cert.get("software")

    def ok(x):
        return isinstance(x, str) and 0 < len(x) <= SOFTWARE_CHARS and x.isascii() and x.isprintable()
    _need(isinstance(sw, dict) and 0 < len(sw) <= SOFTWARE_ENTRIES and all(ok(k) and ok(v) for k, v in sw.items()),
          f"software={str(sw)[:60]!r} is not an object of 1..{SOFTWARE_ENTRIES} name: version strings (printable "
          f"ASCII, at most {SOFTWARE_CHARS} characters each)")
    versions = ", ".join(f"{k} {v}" for k, v in sw.items())
    return {"software": f"recorded versions ({versions}): what made the certificate, not verified by the checker "
                        "(they do not enter the proof)"}


def _claimed_numbers(cert, n: int, winner: int):
    """``(tau, a_low, u_low)``: the sum of the recorded steps and the recorded bounds, exactly."""
    try:
        steps = cert.get("steps")
        _need(isinstance(steps, list) and all(isinstance(st, dict) for st in steps), "steps is not a list")
        for k, st in enumerate(steps):
            _need(set(st) == STEP_KEYS, f"step {k} has unknown fields {sorted(map(str, set(st) - STEP_KEYS))} or "
                  f"lacks {sorted(STEP_KEYS - set(st))}; expected exactly {sorted(STEP_KEYS)}")
        tau = sum((parse_dyadic(st.get("h")) for st in steps), Fraction(0))
        bounds = cert.get("bounds")
        _need(isinstance(bounds, dict), "bounds missing")
        a_t, u_t = bounds.get("a_gap_lower"), bounds.get("u_gap_lower")
        _need(isinstance(a_t, list) and isinstance(u_t, list) and len(a_t) == n and len(u_t) == n,
              "bounds do not list one gap per token")
        _need(a_t[winner] is None and u_t[winner] is None, f"bounds list a gap for the winner (token {winner})")
        a_low = [None if j == winner else parse_dyadic(a_t[j]) for j in range(n)]
        u_low = [None if j == winner else parse_dyadic(u_t[j]) for j in range(n)]
    except Reject as exc:
        raise _Reject(str(exc)) from None
    return tau, a_low, u_low


def check_certificate(cert, *, replay: bool = True, arith: str = "arb",
                      time_budget: float | None = None) -> CheckResult:
    """Re-verify a certificate from scratch (see the module docstring). Never raises on bad content.

    1. structure, ``status``, the digest, known keys only;
    2. the mathematics with the **independent checker** (:func:`numerics.validated.certcheck.independent_check`,
       its own enclosure method and code; ``arith``: ``'arb'`` or ``'iv'``);
    3. with ``replay`` (default) also every recorded step with the certifier's own method
       (a-priori box and Taylor end enclosure of :mod:`numerics.validated.enclosure`);
    4. every display field (``token``, ``conclusion``, ``tau_star_decimal``, the
       ``*_decimal`` bounds) against its value derived from the re-verified numbers by the
       independent checker's own code, and the texts ``system``, ``lemma``, ``evidence``,
       ``lemma_steps``: a mismatch rejects the certificate even when the digest was recomputed
       after the edit. The model (``init.loss``, ``init.link``) is checked by both.

    Unknown keys are refused at every level (the certificate, ``init``, every step, ``bounds``). The one
    field no check can verify, ``software`` (the versions that made the certificate; they do not enter the
    proof), must be well formed and is returned in ``not_checked``, which ``--check`` prints as not checked.

    Work bound: the independent checker tries at most
    :data:`numerics.validated.certcheck.SUBSTEPS_PER_STEP` substeps per recorded step, the replay
    recomputes each recorded step once; ``time_budget`` (seconds, ``None``: no limit; ``certify --check``
    uses :data:`DEFAULT_CHECK_TIME_BUDGET`) bounds both together. Past either bound the certificate is
    refused, with a reason that says so.
    """
    if time_budget is not None and (isinstance(time_budget, bool) or not isinstance(time_budget, (int, float))
                                    or not 0 < time_budget < math.inf):
        raise InvalidArgument(f"time_budget={time_budget!r} is not allowed; expected a positive number of seconds "
                              "or None")
    if arith not in ("arb", "iv"):
        raise InvalidArgument(f"arith={arith!r} is not allowed; expected 'arb' or 'iv'")
    started = time.perf_counter()
    deadline = None if time_budget is None else started + time_budget
    steps_done = 0
    try:  # 1. reading and the cheap checks: a value of the wrong type or shape here is a refusal
        _need(isinstance(cert, dict), "certificate is not a JSON object")
        _need(cert.get("format") == FORMAT and cert.get("version") in READ_VERSIONS
              and not isinstance(cert.get("version"), bool),
              f"format/version {cert.get('format')!r}/{cert.get('version')!r} is not {FORMAT!r} with a version "
              f"this softpolar reads ({', '.join(map(str, READ_VERSIONS))}); re-run certify on its init")
        _need(cert.get("status") == "certified", f"status is {cert.get('status')!r}, not 'certified'")
        _need(cert.get("digest") == certificate_digest(cert),
              "digest mismatch: the certificate was edited after it was made")
        extra = sorted(set(cert) - CERT_KEYS)
        _need(not extra, f"unknown fields {extra}")
        prec, order = cert.get("prec"), cert.get("order")
        _need(isinstance(prec, int) and 32 <= prec <= MAX_PREC, f"prec={prec!r} out of range")
        _need(isinstance(order, int) and 2 <= order <= MAX_ORDER, f"order={order!r} out of range")
        not_checked = _software_not_checked(cert)
        try:
            init = parse_init(cert.get("init"))
        except InvalidArgument as exc:
            raise _Reject(f"init: {exc}") from None
        n = init.n
        winner = cert.get("winner")
        _need(isinstance(winner, int) and not isinstance(winner, bool) and 0 <= winner < n,
              f"winner={winner!r} is not a token index")
        tau_claim, a_claim, u_claim = _claimed_numbers(cert, n, winner)
        _check_texts(cert)
    except _Reject as exc:
        return CheckResult(False, str(exc), 0, time.perf_counter() - started, replay=None)
    except READ_ERRORS as exc:
        return CheckResult(False, f"malformed certificate ({type(exc).__name__}: {str(exc)[:100]})", 0,
                           time.perf_counter() - started, replay=None)
    independent = None
    try:  # 2. the mathematics, on a certificate read above: an exception of the checkers' code is a crash
        ind = independent_check(cert, arith=arith, time_budget=time_budget)
        independent = {"ok": ind.ok, "method": "polynomial (u, a, s) Taylor recurrence with first-order a-priori "
                       f"boxes, own code ({ind.arith})", "substeps": ind.substeps,
                       "seconds": round(ind.seconds, 3)}
        if ind.crashed:
            return CheckResult(False, ind.reason, 0, time.perf_counter() - started, independent=independent,
                               replay=None, crashed=f"independent checker: {ind.crashed}")
        if not ind.ok:
            if deadline is not None and time.perf_counter() > deadline:
                raise _Reject(f"time budget of {time_budget:g} s used up (independent checker: {ind.reason})")
            raise _Reject(f"independent checker: {ind.reason}")
        a_low, u_low = list(ind.a_gap_lower), list(ind.u_gap_lower)
        tau_ind = ind.tau_star
        if replay:
            steps_done = replay_certificate(cert, init, prec, order, winner, a_low, u_low,
                                 None if deadline is None else (deadline, time_budget))
        _need(steps_done == len(cert["steps"]) or not replay, "replay did not cover every step")
        _need(tau_ind == tau_claim and a_low == a_claim and u_low == u_claim,
              "the independent checker verified other numbers than the certificate states")
        expected = ind.display  # the display fields, derived by the independent checker's own code
    except _Reject as exc:
        return CheckResult(False, str(exc), steps_done, time.perf_counter() - started, independent=independent,
                           replay=None)
    except Exception as exc:  # a bug of the checkers on a certificate they read: a crash
        crash, who = f"{type(exc).__name__}: {str(exc)[:200]}", "replay" if independent else "checker"
        return CheckResult(False, f"the {who} crashed ({crash})", steps_done, time.perf_counter() - started,
                           independent=independent, replay=None, crashed=f"{who}: {crash}")
    return CheckResult(True, "", steps_done if replay else len(cert["steps"]), time.perf_counter() - started,
                       winner, expected["tau_star"], expected["tau_star_decimal"], expected["bounds"],
                       independent, True if replay else None, not_checked)


def replay_certificate(cert, init, prec, order, winner, a_low, u_low, budget=None) -> int:
    """Re-verify every recorded step with the certifier's method; returns the number of steps.

    ``budget``: ``(deadline, seconds)``, the ``time.perf_counter()`` value past which it refuses, and the budget."""
    n = init.n
    u0, a0, b = init.exact()
    steps_done = 0
    with V.arb_context(prec, cap=order + 4):
        try:
            X = [V.ball_from_str(s) for s in cert["initial"]]
            bb = V.ball_from_str(cert["b"])
        except (InvalidArgument, *READ_ERRORS) as exc:
            raise _Reject(f"initial enclosure unreadable: {exc}") from None
        _need(len(X) == 2 * n, f"initial enclosure has {len(X)} balls, expected {2 * n}")
        for k, (x, q) in enumerate(zip(X, u0 + a0)):
            _need(x.contains(V.arb_from_rational(q)), f"initial ball {k} does not contain the exact initial value")
        _need(bb.contains(V.arb_from_rational(b)), "the ball for b does not contain |w|^2")
        _need(bb > 0, "b is not proven positive")
        tau = Fraction(0)
        steps = cert.get("steps")
        _need(isinstance(steps, list), "steps is not a list")
        for k, st in enumerate(steps):
            if budget is not None and time.perf_counter() > budget[0]:
                raise _Reject(f"time budget of {budget[1]:g} s used up in the replay, at step {k} of {len(steps)}")
            try:
                h = V.dyadic_from_str(st["h"])
                box = [V.ball_from_str(s) for s in st["box"]]
                end = [V.ball_from_str(s) for s in st["end"]]
            except (InvalidArgument, *READ_ERRORS) as exc:
                raise _Reject(f"step {k} unreadable: {exc}") from None
            _need(h > 0, f"step {k}: h = {h} is not positive")
            _need(len(box) == 2 * n and len(end) == 2 * n, f"step {k}: wrong number of balls")
            _need(V.check_apriori(X, bb, h, box), f"step {k} (tau = {float(tau):.6g}): the a-priori box "
                  "does not satisfy X + [0,h] f(B) inside B (replay)")
            computed, _ = V.step_enclosure(X, bb, h, box, order)
            for c, (e_claim, e_comp) in enumerate(zip(end, computed)):
                _need(e_claim.contains(e_comp), f"step {k} (tau = {float(tau):.6g}): component {c} of the "
                      "recorded end enclosure does not contain the recomputed one (replay)")
            X = end
            tau += h
            steps_done += 1
        for j in range(n):
            if j == winner:
                continue
            _need(gap_bound_holds(X[n + winner] - X[n + j], a_low[j], strict=True),
                  f"a_{winner} - a_{j} >= {float(a_low[j]):.6g} does not follow from the final "
                  "recorded enclosure (replay)")
            _need(gap_bound_holds(X[winner] - X[j], u_low[j], strict=False),
                  f"u_{winner} - u_{j} >= {float(u_low[j]):.6g} does not follow from the final "
                  "recorded enclosure (replay)")
    return steps_done


def wrong_winner_certificate(cert: dict, winner: int) -> dict:
    r"""A copy of a certified ``cert`` that claims token ``winner`` (0-based) instead.

    The claim part is rewritten consistently (``winner``, ``token``, ``conclusion``, the
    most lenient bounds $a_j-a_k\ge2^{-64}$, $u_j-u_k\ge0$, their decimals) and the digest
    is recomputed, so only the mathematics can reject it. For the true winner the copy is
    a valid certificate (the control is passable); for any other token it is a false
    statement that :func:`check_certificate` must refuse.
    """
    n = len(cert["init"]["a"])
    check_int("winner", winner, minimum=0)
    if winner >= n:
        raise InvalidArgument(f"winner={winner} is not allowed; expected a token index below {n}")
    out = json.loads(json.dumps(cert))
    tau = V.dyadic_from_str(cert["tau_star"])
    low_a = [None if k == winner else Fraction(1, 2**64) for k in range(n)]
    low_u = [None if k == winner else Fraction(0) for k in range(n)]
    out.update(claim_fields(winner, tau, low_a, low_u))
    out["digest"] = certificate_digest(out)
    return out


def load_certificate(path) -> dict:
    """Read a certificate file (JSON); raise ``InvalidArgument`` if it cannot be read or parsed."""
    def finite(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):   # 1e999999999 reads as inf: refused here, not at the first arithmetic
            raise InvalidArgument(f"certificate={os.fspath(path)!r}: the number {text[:40]} overflows float64; "
                                  "expected a JSON certificate with finite numbers")
        return value

    def constant(name: str):
        raise InvalidArgument(f"certificate={os.fspath(path)!r}: {name} is not JSON; expected a JSON certificate "
                              "with finite numbers")

    return read_json(path, "certificate", expected="a JSON certificate", parse_float=finite,
                     parse_constant=constant)


#: how certificates are written: :func:`numerics.io.write_json_atomic` with ``indent=1`` and a trailing
#: newline, into a folder that must exist (``InvalidArgument`` otherwise; nothing left behind on failure)
write_json_atomic = functools.partial(_io.write_json_atomic, indent=1, parents=False)


# ---------------------------------------------------------------------------------------
# families and the cross-check
# ---------------------------------------------------------------------------------------
def family_init(seed: int, n: int, *, v_scale: float = 0.1, a_mean: float = 1.0, a_scale: float = 0.1,
                digits: int = 12) -> CertifyInput:
    r"""A seeded non-uniform initialization (the authors' normalization-comparison setting [C]).

    $d=n$, $V=v_{\rm scale}\,\mathcal N(0,1)$, $a(0)=a_{\rm mean}\mathbf 1+a_{\rm scale}\,\mathcal N(0,1)$,
    $w\sim\mathcal N(0,I)$ normalized; each number written with ``digits``
    significant digits (the decimals *are* the initialization). ``numpy``'s
    ``default_rng(seed)``; draws in the order V, a, w.
    """
    check_int("seed", seed, minimum=0)
    check_int("n", n, minimum=2)
    rng = np.random.default_rng(seed)
    Vm = v_scale * rng.standard_normal((n, n))
    a = a_mean + a_scale * rng.standard_normal(n)
    w = rng.standard_normal(n)
    w = w / np.linalg.norm(w)
    fmt = f"{{:.{digits - 1}e}}"
    obj = {"loss": "logistic", "link": "softmax", "V": [[fmt.format(x) for x in row] for row in Vm],
           "a": [fmt.format(x) for x in a], "target": [fmt.format(x) for x in w]}
    return parse_init(obj)


def simulate_winner(init: CertifyInput, tau_end: float, *, rtol: float = 1e-12) -> dict:
    r"""Float64 DOP853 simulation of the full flow in the clock $\tau$: the independent cross-check.

    Integrates $(V,a)$ with the generated right-hand side (:func:`numerics.flow_rhs`)
    divided by $\gamma=-\ell'(z)=-\langle g,w\rangle/\|w\|^2$, i.e. $dV/d\tau$,
    $da/d\tau$; ``atol = rtol``. Not part of any certificate. Returns the argmax of
    $s$ at ``tau_end``, the max weight there and the first sample time at which
    the float state lies in $R_i^+$ for that token.
    """
    from scipy.integrate import solve_ivp

    rhs = flow_rhs("logistic", "softmax", backend="numpy")
    n, d = init.n, init.d
    Vm = np.array([[float(x) for x in row] for row in init.V])
    a = np.array([float(x) for x in init.a])
    w = np.array([float(x) for x in init.target])
    b = float(w @ w)

    def f(_tau, y):
        Vt, at = y[:d * n].reshape(d, n), y[d * n:]
        dV, da = rhs(Vt, at, w)
        g = rhs.grad_loss(rhs.output(Vt, at), w)
        gamma = -float(g @ w) / b
        return np.concatenate([dV.ravel(), da]) / gamma

    ts = np.linspace(0.0, tau_end, 2001)
    sol = solve_ivp(f, (0.0, tau_end), np.concatenate([Vm.ravel(), a]), method="DOP853", rtol=rtol,
                    atol=rtol, t_eval=ts)
    if sol.status != 0:
        raise RuntimeError(f"simulation failed at tau = {sol.t[-1] if sol.t.size else 0.0}: {sol.message}")
    a_end = sol.y[d * n:, -1]
    s = np.exp(a_end - a_end.max())
    s /= s.sum()
    win = int(np.argmax(s))
    entry = None
    for k in range(ts.size):
        Vt, at = sol.y[:d * n, k].reshape(d, n), sol.y[d * n:, k]
        u = Vt.T @ w
        if all(at[win] > at[j] and u[win] >= u[j] for j in range(n) if j != win):
            entry = float(ts[k])
            break
    return {"winner": win, "max_weight": float(s.max()), "tau_end": float(tau_end), "entry_tau": entry}


def certify_family(seeds, ns, *, tau_max=DEFAULT_TAU_MAX, prec: int = V.DEFAULT_PREC,
                   order: int = V.DEFAULT_ORDER, check: bool = True, simulate: bool = True,
                   out_dir=None, progress=None, certificates: bool = False, **init_kwargs) -> list[dict]:
    r"""Certify :func:`family_init` ``(seed, n)`` for every ``n`` in ``ns`` and seed in ``seeds``.

    One record (a JSON-able dict) per instance: ``seed``, ``n``, ``status``,
    ``winner`` (0-based), ``tau_star``, ``steps``, ``seconds`` (certify),
    ``check`` (``passed``/``failed``/``None``), ``check_crashed`` (what crashed in the checkers' own code,
    :attr:`CheckResult.crashed`, else ``None``) and ``check_seconds``,
    ``sim_winner``, ``sim_max_weight``, ``sim_entry_tau``, ``agrees`` (certified
    winner == simulated winner), ``argmax_u0``, ``argmax_a0``, and
    ``uniform_a0`` (always ``False`` here: the paper's theorem needs a uniform
    $a(0)$, so none of these is covered by it). ``out_dir``: write each
    certificate there as ``cert_n{n}_seed{seed}.json``. ``progress(record)`` is
    called after each instance. ``independent``: the independent checker's summary
    (:mod:`numerics.validated.certcheck`) when checked; ``certificates=True`` also keeps each
    certificate (JSON object) under ``certificate``.
    """
    records = []
    for n in ns:
        for seed in seeds:
            init = family_init(seed, n, **init_kwargs)
            u0, a0, _ = init.exact()
            res = certify(init, tau_max=tau_max, prec=prec, order=order)
            rec = {"seed": seed, "n": n, "status": res.status, "winner": res.winner,
                   "tau_star": None if res.tau_star is None else float(res.tau_star),
                   "steps": res.steps, "seconds": round(res.seconds, 3), "reason": res.reason,
                   "argmax_u0": max(range(n), key=lambda k: u0[k]), "argmax_a0": max(range(n), key=lambda k: a0[k]),
                   "uniform_a0": len(set(a0)) == 1, "check": None, "check_crashed": None, "check_seconds": None,
                   "independent": None,
                   "sim_winner": None, "sim_max_weight": None, "sim_entry_tau": None, "agrees": None}
            if out_dir is not None:
                write_json_atomic(Path(out_dir) / f"cert_n{n}_seed{seed}.json", res.certificate)
            if certificates:
                rec["certificate"] = json.loads(json.dumps(res.certificate))
            if check and res.status == "certified":
                chk = check_certificate(json.loads(json.dumps(res.certificate)))
                rec["check"] = "passed" if chk.ok else f"failed: {chk.reason}"
                rec["check_crashed"] = chk.crashed or None
                rec["check_seconds"] = round(chk.seconds, 3)
                rec["independent"] = chk.independent
            if simulate:
                tau_end = max(20.0, 3.0 * (rec["tau_star"] or 0.0))
                sim = simulate_winner(init, tau_end)
                rec.update(sim_winner=sim["winner"], sim_max_weight=sim["max_weight"],
                           sim_entry_tau=sim["entry_tau"])
                if res.status == "certified":
                    rec["agrees"] = sim["winner"] == res.winner
            records.append(rec)
            if progress is not None:
                progress(rec)
    return records


def near_tie_init(n: int = 3, *, gap: str = "1e-45", conflicting: bool = False) -> CertifyInput:
    r"""A negative control: tokens 1 and 2 tied up to ``gap``, the others far behind.

    ``d = 1``, ``w = (1)``, $u=(0.3+\mathrm{gap},\,0.3,\,-0.2,\dots)$,
    $a=(1\pm\mathrm{gap},\,1,\,0,\dots)$ (``-`` if ``conflicting``: token 1 leads in
    $u$, token 2 in $a$). With ``gap`` below the working precision the enclosure
    cannot separate the two tokens; with ``conflicting`` the true flow needs a
    long time to leave the tie. Either way ``certify`` must answer ``not
    certified`` within a moderate ``tau_max`` rather than guess.
    """
    check_int("n", n, minimum=2)
    g = Decimal(_decimal("gap", gap))
    with decimal.localcontext() as dctx:
        dctx.prec = 1000  # exact sums of the short decimals involved
        V0 = [str(Decimal("0.3") + g), "0.3"] + ["-0.2"] * (n - 2)
        a0 = [str(Decimal(1) - g if conflicting else Decimal(1) + g), "1"] + ["0"] * (n - 2)
    return parse_init({"loss": "logistic", "link": "softmax", "V": [V0], "a": a0, "target": ["1"]})


__all__ = ["CertifyInput", "CertifyResult", "CheckResult", "RegionTest", "parse_init", "load_init",
           "certify", "check_certificate", "load_certificate", "write_json_atomic", "region_test",
           "family_init", "simulate_winner", "certify_family", "near_tie_init", "wrong_winner_certificate",
           "replay_certificate"]
