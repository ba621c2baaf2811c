r"""Coq files that close a certificate (or atlas boxes) with the machine-checked trapping lemma.

A point certificate (:mod:`numerics.validated._certify`) proves with interval arithmetic that at
$\tau^*$ the solution satisfies $a_i-a_j\ge L^a_j>0$ and $u_i-u_j\ge L^u_j\ge0$ for all $j\ne i$. An
atlas box records the same bounds for every initialization in the box. The file written here states
those bounds as exact rationals (the enclosure), proves with ``lra`` that they put the state in
$R_i^+$, and applies ``softpolar_trapping`` (the tau-system from $\tau^*$ on) and
``softpolar_trapping_logistic`` (the logistic flow in the original time, from the time $t^*$ at which
the clock reads $\tau^*$) of the Coq development :mod:`theorems.coq`. What stays trusted is only the
validated integrator: that the solution's state at $\tau^*$ lies in the enclosure.

Check with ``python -m theorems.coq check FILE.v`` (``softpolar certify --coq FILE.v`` does it when
``coqc`` is installed): it vouches that the file compiles and rests on the allowed axioms only, not that its
bounds are a certificate's; ``certify --check CERT.json --coq FILE.v`` writes them again from the re-verified
certificate.
"""
from __future__ import annotations

import re
from fractions import Fraction

from theorems import InvalidArgument

HEADER = ("From Coq Require Import Reals Lra Lia.\n"
          "From Softpolar Require Import Calculus Softmax Trapping.\n"
          "Open Scope R_scope.\n")


def exact_rational(value, what: str = "bound") -> Fraction:
    """A certificate's exact number (``'m/2^k'``, ``'p/q'``, an integer) as a :class:`Fraction`."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(-?\d+)\s*/\s*2\^(\d+)\s*", value)
        if m:
            return Fraction(int(m.group(1)), 2 ** int(m.group(2)))
        if re.fullmatch(r"\s*-?\d+(\s*/\s*\d+)?\s*", value):
            return Fraction(value.replace(" ", ""))
    raise InvalidArgument(f"{what}={value!r} is not allowed; expected an exact rational ('m/2^k', 'p/q' or an integer)")


def coq_real(q: Fraction) -> str:
    """``q`` as a Coq real literal expression."""
    q = Fraction(q)
    num = f"({q.numerator})" if q.numerator < 0 else str(q.numerator)
    return num if q.denominator == 1 else f"({num} / {q.denominator})"


def _ident(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    if not re.match(r"[A-Za-z]", ident):
        ident = "c_" + ident
    return ident


def region_block(name: str, n: int, winner: int, tau, b, a_lower, u_lower, comment: str = "") -> str:
    """Definitions, the enclosure-in-$R_i^+$ lemma and the two trapping corollaries for one enclosure."""
    if not (isinstance(n, int) and n >= 2 and isinstance(winner, int) and 0 <= winner < n):
        raise InvalidArgument(f"n={n!r}, winner={winner!r}: expected n >= 2 and 0 <= winner < n")
    if len(a_lower) != n or len(u_lower) != n:
        raise InvalidArgument(f"a_lower/u_lower: expected {n} entries each")
    N, i = _ident(name), winner
    tau, b = exact_rational(tau, "tau"), exact_rational(b, "b")
    if b <= 0:
        raise InvalidArgument(f"b={b}: expected b > 0")
    facts = []
    for j in range(n):
        if j == i:
            continue
        la, lu = exact_rational(a_lower[j], "a_lower"), exact_rational(u_lower[j], "u_lower")
        if la <= 0 or lu < 0:
            raise InvalidArgument(f"bounds for j={j}: a-gap bound {la} must be > 0 and u-gap bound {lu} >= 0")
        facts.append(f"a {i}%nat - a {j}%nat >= {coq_real(la)}")
        facts.append(f"u {i}%nat - u {j}%nat >= {coq_real(lu)}")
    cases = " \\/ ".join(f"j = {j}%nat" for j in range(n))
    concl = (f"  (forall j, (j < {n})%nat -> j <> {i}%nat -> tends_to_infty (fun t => a t {i}%nat - a t j)) /\\\n"
             f"  (forall k, (k < {n})%nat -> tends_to (fun t => softmax {n} (a t) k) "
             f"(if Nat.eq_dec k {i}%nat then 1 else 0))")
    L = [f"(** {comment} *)" if comment else "",
         f"Definition {N}_tau : R := {coq_real(tau)}.",
         f"Definition {N}_b : R := {coq_real(b)}.",
         f"(** The validated enclosure at tau = {N}_tau: the only trusted input. *)",
         f"Definition {N}_enclosure (u a : nat -> R) : Prop :=\n  " + " /\\\n  ".join(facts) + ".",
         f"Lemma {N}_in_Rplus : forall u a, {N}_enclosure u a -> in_Rplus {n} {i}%nat u a.",
         "Proof.",
         f"  intros u a H j Hj Hne. unfold {N}_enclosure in H.",
         "  repeat match goal with Hc : _ /\\ _ |- _ => destruct Hc end.",
         f"  assert (Hc : {cases}) by lia.",
         "  repeat destruct Hc as [Hc | Hc]; subst j; (exfalso; apply Hne; reflexivity) || (split; lra).",
         "Qed.",
         f"Theorem {N}_polarizes : forall u a, is_tau_solution {n} {N}_b u a {N}_tau ->",
         f"  {N}_enclosure (u {N}_tau) (a {N}_tau) ->",
         f"  (forall t, {N}_tau <= t -> in_Rplus {n} {i}%nat (u t) (a t)) /\\",
         concl + ".",
         "Proof.",
         f"  intros u a Hsol Henc. apply (softpolar_trapping {n} {i}%nat {N}_b u a {N}_tau);",
         f"    [lia | unfold {N}_b; lra | exact Hsol | apply {N}_in_Rplus; exact Henc].",
         "Qed.",
         f"Theorem {N}_polarizes_in_t : forall tau u a t_star, is_logistic_solution {n} {N}_b tau u a t_star ->",
         f"  {N}_enclosure (u t_star) (a t_star) ->",
         "  tends_to_infty tau /\\",
         concl + ".",
         "Proof.",
         "  intros tau u a t_star Hsol Henc.",
         f"  destruct (softpolar_trapping_logistic {n} {i}%nat {N}_b tau u a t_star) as [H1 [_ H2]];",
         f"    [lia | unfold {N}_b; lra | exact Hsol | apply {N}_in_Rplus; exact Henc |].",
         "  split; [exact H1 | exact H2].",
         "Qed.",
         ""]
    return "\n".join(x for x in L if x != "" or True)


def certificate_to_coq(cert: dict) -> str:
    """The Coq file closing a certified point certificate (its bounds at $\\tau^*$, applied to the lemma)."""
    if not isinstance(cert, dict) or cert.get("status") != "certified":
        raise InvalidArgument("cert: expected a certified polarization certificate (status 'certified')")
    from ._certify import parse_init
    init = parse_init(cert["init"])
    *_, b = init.exact()
    bounds = cert["bounds"]
    n, i = init.n, cert["winner"]
    a_low = [0 if j == i else bounds["a_gap_lower"][j] for j in range(n)]
    u_low = [0 if j == i else bounds["u_gap_lower"][j] for j in range(n)]
    digest = cert.get("digest", "")
    body = region_block("cert", n, i, cert["tau_star"], b, a_low, u_low,
                        comment=f"Certificate {digest}: n = {n}, token {i + 1}, tau* = {cert['tau_star']}")
    return ("(* Written by softpolar certify --coq: the certificate's enclosure at tau*, closed with the Coq\n"
            "   trapping lemma. Check: python -m theorems.coq check THIS_FILE.v (it compiles, without Admitted or\n"
            "   axioms beyond the allowed ones); that these bounds are the certificate's is what\n"
            "   softpolar certify --check CERT.json --coq NEW.v says, writing them again from CERT.json. *)\n"
            + HEADER + "\n" + body)


def atlas_boxes_to_coq(n: int, b, boxes, *, label: str = "atlas") -> str:
    """The Coq file closing atlas boxes (records with ``key``, ``winner``, ``tau``, ``a_lower``, ``u_lower``)."""
    parts = ["(* Written by softpolar: atlas boxes' enclosures at tau, closed with the Coq trapping lemma. *)\n",
             HEADER]
    for box in boxes:
        if box.get("status") != "certified":
            raise InvalidArgument(f"box {box.get('key')!r}: expected a certified box")
        i = box["winner"]
        key = "_".join(str(k) for k in box["key"])
        a_low = [0 if j == i else box["a_lower"][j] for j in range(n)]
        u_low = [0 if j == i else box["u_lower"][j] for j in range(n)]
        parts.append(region_block(f"{label}_box_{key}", n, i, box["tau"], b, a_low, u_low,
                                  comment=f"box {box['key']}: token {i + 1}, tau = {box['tau']}"))
    return "\n".join(parts)
