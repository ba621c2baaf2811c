"""Does a ``certify --coq`` file state the certificate's theorem? (issue 37: ``theorems.coq check F.v C.json``)

The file's proof is Coq's business (it compiles or not: :func:`theorems.coq.check_file`); what it *states* is
compared here with the certificate: the definitions that fix the initial condition and the winner (``cert_V0``,
``cert_beta``, ``cert_a0``, ``cert_n``, ``cert_winner``, ``cert_u0``, ``cert_b``) and the statement of
``cert_polarizes`` must read exactly as the emitter writes them for that certificate, each defined once.
"""
from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from theorems.errors import InvalidArgument
from . import code_only
from .certmodel import MODEL_THEOREM, model_statement

#: The declarations that make up the statement, compared verbatim.
STATEMENT_NAMES = ("cert_V0", "cert_beta", "cert_a0", "cert_n", "cert_winner", "cert_u0", "cert_b")
THEOREM = "cert_polarizes"


def coq_real(q: Fraction) -> str:
    """``q`` as a Coq real literal expression."""
    q = Fraction(q)
    num = f"({q.numerator})" if q.numerator < 0 else str(q.numerator)
    return num if q.denominator == 1 else f"({num} / {q.denominator})"


def vector(name: str, vals) -> str:
    arms = " | ".join(f"{k}%nat => {coq_real(v)}" for k, v in enumerate(vals))
    return f"Definition {name} (k : nat) : R := match k with {arms} | _ => 0 end."


def exact(x) -> Fraction:
    """A certificate's init number (decimal text, an int, or a float at its exact binary value)."""
    if isinstance(x, bool) or not isinstance(x, (str, int, float)):
        raise InvalidArgument(f"init number {x!r} is not allowed; expected decimal text or a number")
    return Fraction(Decimal(x))


def statement(V, w, a0, winner: int, tK: str) -> tuple[list[str], list[str]]:
    """The definitions fixing the initial condition and the statement of ``cert_polarizes`` (up to ``Proof.``), for
    V(0) (d rows of n), beta* (d), a(0) (n), the winner and the entry time ``tK`` (a Coq real literal)."""
    d, n, i = len(V), len(a0), winner
    arms = " | ".join(f"{r}%nat, {c}%nat => {coq_real(V[r][c])}" for r in range(d) for c in range(n))
    defs = [f"Definition cert_V0 (r c : nat) : R := match r, c with {arms} | _, _ => 0 end.",
            vector("cert_beta", w), vector("cert_a0", a0),
            f"Definition cert_n : nat := {n}%nat.", f"Definition cert_winner : nat := {i}%nat.",
            f"Definition cert_u0 (k : nat) : R := sumn (fun r => cert_V0 r k * cert_beta r) {d}.",
            f"Definition cert_b : R := sumn (fun r => cert_beta r * cert_beta r) {d}."]
    thm = [f"Theorem cert_polarizes : forall u a, is_tau_solution {n} cert_b u a 0 ->",
           f"  (forall k, (k < {n})%nat -> u 0 k = cert_u0 k /\\ a 0 k = cert_a0 k) ->",
           f"  (forall t, {tK} <= t -> in_Rplus {n} {i}%nat (u t) (a t)) /\\",
           f"  (forall j, (j < {n})%nat -> j <> {i}%nat -> tends_to_infty (fun t => a t {i}%nat - a t j)) /\\",
           f"  (forall k, (k < {n})%nat -> tends_to (fun t => softmax {n} (a t) k) "
           f"(if Nat.eq_dec k {i}%nat then 1 else 0)).",
           "Proof."]
    return defs, thm


def expected_for(cert: dict) -> tuple[list[str], list[str]]:
    """:func:`statement` for a certificate (its ``init`` and ``winner``), with the entry time left as ``TAU_K``."""
    init = cert["init"]
    V = [[exact(x) for x in row] for row in init["V"]]
    return statement(V, [exact(x) for x in init["target"]], [exact(x) for x in init["a"]], int(cert["winner"]),
                     "TAU_K")


def _strip_comments(text: str) -> str:
    return code_only(text)


def _declarations(code: str) -> dict[str, list[str]]:
    """Each ``Definition``/``Theorem`` sentence of ``code`` (whitespace normalized), by name; a theorem's sentence
    ends at its ``Proof.``."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"(?:(?<=\s)|^)(Definition|Theorem|Lemma|Let|Fixpoint|Notation)\s+([A-Za-z_][\w']*)"
                         r"(.*?)(?:\.\s*Proof\.|\.(?=\s|$))", code, re.S):
        out.setdefault(m.group(2), []).append(" ".join((m.group(1) + " " + m.group(2) + m.group(3)).split()))
    return out


def compare(text: str, cert: dict) -> list[str]:
    """The reasons the file ``text`` does not state ``cert``'s theorem (empty when it does)."""
    defs, thm = expected_for(cert)
    expected = _declarations("\n".join(defs + thm))
    found = _declarations(_strip_comments(text))
    # the entry time tau_K is the file's own (any value the compiled proof reaches is a true statement)
    for name in (THEOREM,):
        found[name] = [re.sub(r"\(forall t, (\(?-?\d+( / \d+)?\)?) <= t ->", "(forall t, TAU_K <= t ->", x)
                       for x in found.get(name, [])]
    init = cert["init"]
    expected.update(_declarations("\n".join(model_statement(len(init["a"]), len(init["V"]), int(cert["winner"])))))
    problems = []
    for name in STATEMENT_NAMES + (THEOREM, MODEL_THEOREM):
        got = found.get(name, [])
        if len(got) != 1:
            problems.append(f"{name}: defined {len(got)} times in the file, expected once")
        elif got[0] != expected[name][0]:
            problems.append(f"{name}: the file says {got[0][:160]!r}, "
                            f"the certificate gives {expected[name][0][:160]!r}")
    if re.search(r"\b(Module|Section|Require\s+Export|Notation|Infix|Arguments|Strategy|Opaque)\b",
                 _strip_comments(text)):
        problems.append("the file uses Module/Section/Notation/Arguments/Opaque/Export, which the emitter never writes")
    return problems


def load(file: str, cert_path: str) -> tuple[str, dict]:
    """Read the two arguments, refusing bad ones with :class:`InvalidArgument` (exit 2)."""
    p = Path(file)
    if p.suffix != ".v" or not p.is_file():
        raise InvalidArgument(f"FILE={file!r} is not allowed; expected an existing Coq source file (.v)")
    c = Path(cert_path)
    try:
        cert = json.loads(c.read_text())
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"CERT={cert_path!r} is not allowed; expected a certificate JSON file ({exc})") from None
    if not isinstance(cert, dict) or cert.get("status") != "certified" or "init" not in cert:
        raise InvalidArgument(f"CERT={cert_path!r} is not allowed; expected a certified point certificate "
                              f"(softpolar certify --out)")
    return p.read_text(), cert
