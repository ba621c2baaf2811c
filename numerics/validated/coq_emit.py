r"""Coq files that close a certificate (or atlas boxes) with the machine-checked trapping lemma.

A point certificate (:mod:`numerics.validated.certify`) proves with interval arithmetic that at
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

import math
import re
from fractions import Fraction
from mpmath import iv

from theorems import InvalidArgument
from theorems.coq.certmodel import model_theorem
from theorems.coq.certstatement import statement
from .certify import _fraction, parse_init

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
    init = parse_init(cert["init"])
    *_, b = init.exact()
    bounds = cert["bounds"]
    n, i = init.n, cert["winner"]
    a_low = [0 if j == i else bounds["a_gap_lower"][j] for j in range(n)]
    u_low = [0 if j == i else bounds["u_gap_lower"][j] for j in range(n)]
    digest = cert.get("digest", "")
    body = region_block("cert", n, i, cert["tau_star"], b, a_low, u_low,
                        comment=f"Certificate {digest}: n = {n}, token {i}, tau* = {cert['tau_star']}")
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
                                  comment=f"box {box['key']}: token {i}, tau = {box['tau']}"))
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# Issue 37: the replay. Coq re-derives the enclosure from the certificate's initial condition; the integrator is
# untrusted. The chain of boxes is recomputed here (first-order a-priori enclosures, exact dyadic rationals) and every
# inequality it needs is checked by Coq itself: slope bounds with Interval's ``interval``, inclusions with ``lra``.

#: Step of the replay's chain (tau units) and the dyadic grid its bounds are rounded outward to.
REPLAY_STEP = Fraction(1, 64)
REPLAY_GRID = 2 ** 32
#: Slack added to every slope bound so that Coq's own interval evaluation (its precision, not ours) confirms it.
REPLAY_SLACK = Fraction(1, 2 ** 20)
REPLAY_MAX_STEPS = 2000
#: An a-priori box wider than this (in any component) is a failed step: exp of its bounds would overflow long before.
REPLAY_MAX_WIDTH = 64


def _down(q: Fraction) -> Fraction:
    return Fraction((q.numerator * REPLAY_GRID) // q.denominator, REPLAY_GRID)


def _up(q: Fraction) -> Fraction:
    return -_down(-q)


def slope_bounds(El, Eu, n: int, b: Fraction):
    """Outward bounds of the tau-system's field over the box [El, Eu], widened by :data:`REPLAY_SLACK`: naive
    interval evaluation of the field's gap form, the expression Coq evaluates (``cert_G`` of the replay file, proven
    equal to the field there): $s_k = 1/(1+\\sum_{j\\ne k} e^{a_j-a_k})$ (each $a$ enters monotonically, so this
    is $s_k$'s exact range over the box) and $\\dot a_k = s_k\\sum_{j\\ne k} s_j(u_k-u_j)$."""
    iv.prec = 80
    # float() of the box ends can round inward: widen them by one ulp-sized step before evaluating
    y = [iv.mpf([float(El[k]) - abs(float(El[k])) * 2e-16 - 1e-300, float(Eu[k]) + abs(float(Eu[k])) * 2e-16 + 1e-300])
         for k in range(2 * n)]
    u, a = y[:n], y[n:]
    s = []
    for k in range(n):
        Z = iv.mpf(1)
        for j in range(n):
            if j != k:
                Z = Z + iv.exp(a[j] - a[k])
        s.append(1 / Z)
    fa = []
    for k in range(n):
        acc = None
        for j in range(n):
            if j != k:
                term = s[j] * (u[k] - u[j])
                acc = term if acc is None else acc + term
        fa.append(s[k] * acc)
    bi = iv.mpf([float(b) * (1 - 2e-16), float(b) * (1 + 2e-16)])
    f = [bi * s[k] for k in range(n)] + fa
    ends = [(float(x.a), float(x.b)) for x in f]
    if not all(math.isfinite(lo) and math.isfinite(hi) for lo, hi in ends):
        return None                                 # exp overflowed or 0 * inf: no bound, the step fails
    lo = [_down(Fraction(x) - REPLAY_SLACK) for x, _ in ends]
    hi = [_up(Fraction(x) + REPLAY_SLACK) for _, x in ends]
    return lo, hi


def _advance(Bl, Bu, prev, h: Fraction, n: int, b: Fraction):
    """One first-order step of length ``h`` from the box [Bl, Bu]: an a-priori box E (grown until
    B + [0, h] f(E) lies in E's interior) and the next box B + h [fl, fu]. ``None`` when no enclosure is found
    (the field's bounds are not finite, or E had to grow past :data:`REPLAY_MAX_WIDTH`)."""
    m = Fraction(1, 2 ** 16)
    for _try in range(40):
        if prev is None:
            El = [x - m for x in Bl]
            Eu = [x + m for x in Bu]
        else:
            El = [_down(Bl[k] + h * min(0, prev[0][k]) - m) for k in range(2 * n)]
            Eu = [_up(Bu[k] + h * max(0, prev[1][k]) + m) for k in range(2 * n)]
        if max(Eu[k] - El[k] for k in range(2 * n)) > REPLAY_MAX_WIDTH:
            return None
        slopes = slope_bounds(El, Eu, n, b)
        if slopes is None:
            return None
        fl, fu = slopes
        if all(El[k] < Bl[k] + h * min(0, fl[k]) and Bu[k] + h * max(0, fu[k]) < Eu[k] for k in range(2 * n)):
            Nl = [_down(Bl[k] + h * fl[k]) for k in range(2 * n)]
            Nu = [_up(Bu[k] + h * fu[k]) for k in range(2 * n)]
            return {"Bl": Bl, "Bu": Bu, "El": El, "Eu": Eu, "fl": fl, "fu": fu, "h": h}, Nl, Nu
        prev, m = (fl, fu), m * 2
    return None


def _width(Bl, Bu) -> Fraction:
    return sum(u - lo for lo, u in zip(Bl, Bu))


def replay_chain(u0, a0, b: Fraction, winner: int, *, h: Fraction = REPLAY_STEP, max_steps: int = REPLAY_MAX_STEPS,
                 steps_h=None, upper=None):
    """Boxes B_0 = {(u0, a0)}, B_1, ... at tau_{k+1} = tau_k + h_k, each with its a-priori box E_k and slope bounds,
    until B_K lies in R_winner^+ (u_i >= u_j, a_i > a_j). Returns the list of step dicts (each with its ``h``; the
    last holds only B_K).

    ``steps_h``: the step lengths to choose from, longest first (``None``: every step is ``h``); a step takes the
    longest of them whose box grows per unit time at most twice as fast as with the shortest (the shortest when
    none does). ``upper``: ``(u_hi, a_hi)``, the initial box's upper ends (an atlas box: B_0 = [(u0, a0), upper]);
    ``None``: the point (u0, a0). Raises InvalidArgument when the chain does not land in R_i^+ within
    ``max_steps`` steps or the
    boxes grow too wide (the first-order enclosure loses the solution's contraction)."""
    n = len(u0)
    Bl = [Fraction(x) for x in list(u0) + list(a0)]
    Bu = list(Bl) if upper is None else [Fraction(x) for x in list(upper[0]) + list(upper[1])]
    if len(Bu) != 2 * n or any(lo > hi for lo, hi in zip(Bl, Bu)):
        raise InvalidArgument(f"upper={upper!r}: expected the box's upper ends (u, a), each >= the lower end")
    b = Fraction(b)
    choices = [Fraction(h)] if steps_h is None else [Fraction(x) for x in steps_h]
    steps, prev, t = [], None, Fraction(0)
    for _ in range(max_steps):
        base = _advance(Bl, Bu, prev, choices[-1], n, b)
        if base is None:
            raise InvalidArgument(f"replay: no a-priori enclosure at tau = {t} (h = {choices[-1]}): the first-order "
                                  f"boxes grew too wide after {len(steps)} steps")
        pick, w0 = base, _width(Bl, Bu)
        rate0 = (_width(base[1], base[2]) - w0) / choices[-1]
        for hk in choices[:-1]:
            r = _advance(Bl, Bu, prev, hk, n, b)
            if r is not None and (_width(r[1], r[2]) - w0) / hk <= 2 * rate0 + Fraction(1, 2 ** 30):
                pick = r
                break
        st, Bl, Bu = pick
        prev, t = (st["fl"], st["fu"]), t + st["h"]
        steps.append(st)
        i = winner
        if all(Bl[i] >= Bu[j] and Bl[n + i] > Bu[n + j] for j in range(n) if j != i):
            steps.append({"Bl": Bl, "Bu": Bu})
            return steps
    raise InvalidArgument(f"replay: the boxes did not land in R_{winner}^+ within {max_steps} steps "
                          f"(tau = {t})")


#: The schemes :func:`coq_chain` tries (keyword arguments of :func:`replay_chain`): the fixed steps 1/64 and 1/32, and
#: adaptive steps from 1/4 down to 1/128.
REPLAY_SCHEMES = ({"h": REPLAY_STEP}, {"h": Fraction(1, 32)},
                  {"steps_h": tuple(Fraction(1, 2 ** j) for j in range(2, 8))})
#: The most steps a Coq replay file may have (about 0.9 CPU s of coqc each, coqc 8.16, Interval 4): a longer chain is
#: not emitted, and ``certify --coq`` falls back to the closure at tau* (saying that Coq did not check the rest).
REPLAY_COQ_MAX_STEPS = 160


def coq_chain(cert: dict, *, max_steps: int = REPLAY_COQ_MAX_STEPS):
    """The shortest replay chain for a certified point certificate among :data:`REPLAY_SCHEMES` (at most
    ``max_steps`` steps). The chain is recomputed from the initial condition: the certificate's own enclosures are
    not used (nor trusted). Raises InvalidArgument naming why when no scheme lands in R_i^+."""
    init = parse_init(cert["init"])
    u0, a0, b = init.exact()
    return _shortest_chain(lambda scheme: replay_chain(u0, a0, b, cert["winner"], max_steps=max_steps, **scheme))


def _shortest_chain(replay) -> list:
    """The shortest of ``replay(scheme)`` over :data:`REPLAY_SCHEMES`; InvalidArgument joining every scheme's reason
    when none lands."""
    best, why = None, []
    for scheme in REPLAY_SCHEMES:
        try:
            chain = replay(scheme)
        except InvalidArgument as exc:
            why.append(str(exc))
            continue
        if best is None or len(chain) < len(best):
            best = chain
    if best is None:
        raise InvalidArgument("; ".join(why))
    return best


def _vec(name: str, vals) -> str:
    arms = " | ".join(f"{k}%nat => {coq_real(v)}" for k, v in enumerate(vals))
    return f"Definition {name} (k : nat) : R := match k with {arms} | _ => 0 end."


def _gap_form(n: int) -> list[str]:
    """Coq lines: ``cert_G``, the field in gap form (the expression :func:`slope_bounds` evaluates, same order of
    operations), and ``cert_FG``, its proof that it equals ``cert_F`` (``field``, with exp > 0)."""
    def s(k):
        terms = " + ".join(f"exp (y {n + j}%nat - y {n + k}%nat)" for j in range(n) if j != k)
        return f"/ (1 + {terms})"
    arms = [f"{k}%nat => cert_b * {s(k)}" for k in range(n)]
    for k in range(n):
        acc = " + ".join(f"({s(j)}) * (y {k}%nat - y {j}%nat)" for j in range(n) if j != k)
        arms.append(f"{n + k}%nat => ({s(k)}) * ({acc})")
    N = 2 * n
    pos = " ".join(f"pose proof (exp_pos (y {n + j}%nat))." for j in range(n))
    return ["(** The field in gap form: s_k = 1 / (1 + sum_(j <> k) exp (a_j - a_k)) and",
            "    da_k = s_k * sum_(j <> k) s_j (u_k - u_j); each step's slope bounds are Interval's on this form. *)",
            "Definition cert_G (y : nat -> R) (c : nat) : R :=",
            "  match c with\n  | " + "\n  | ".join(arms) + "\n  | _ => 0 end.",
            "Lemma cert_exp_sub : forall x z, exp (x - z) = exp x / exp z.",
            "Proof. intros x z. unfold Rminus, Rdiv. rewrite exp_plus, exp_Ropp. reflexivity. Qed.",
            f"Lemma cert_FG : forall y c, (c < {N})%nat -> cert_F y c = cert_G y c.",
            "Proof.",
            f"  intros y c Hc. {pos}",
            "  assert (Hc' : " + " \\/ ".join(f"c = {c}%nat" for c in range(N)) + ") by lia.",
            "  repeat destruct Hc' as [Hc' | Hc']; subst c;",
            "    unfold cert_F, cert_G, du_rhs, da_rhs, zbar, softmax, Zsum;",
            "    simpl; rewrite ?cert_exp_sub; field; repeat split; apply Rgt_not_eq;",
            "    repeat (apply Rplus_lt_0_compat || apply Rmult_lt_0_compat || apply Rdiv_lt_0_compat"
            " || apply Rinv_0_lt_compat); lra.",
            "Qed."]


def _field_lines(n: int, b_unfold: str) -> list[str]:
    """The state as one vector, the field ``cert_F`` (the tau-system with ``cert_b``), its gap form, and
    ``cert_deriv`` (a solution's components have derivative ``cert_F``)."""
    N = 2 * n
    L = ["",
         "(** The state as one vector: components 0..n-1 are u, n..2n-1 are a. *)",
         "Definition cert_F (y : nat -> R) (k : nat) : R :=",
         f"  if Nat.ltb k {n} then du_rhs {n} cert_b (fun j => y j) (fun j => y ({n} + j)%nat) k",
         f"  else da_rhs {n} (fun j => y j) (fun j => y ({n} + j)%nat) (k - {n}).",
         *_gap_form(n),
         "Definition cert_x (u a : R -> nat -> R) (t : R) (k : nat) : R :=",
         f"  if Nat.ltb k {n} then u t k else a t (k - {n})%nat.",
         "",
         f"Lemma cert_deriv : forall u a t0, is_tau_solution {n} cert_b u a t0 -> forall t, t0 <= t ->",
         f"  forall k, (k < {N})%nat -> derivable_pt_lim (fun s => cert_x u a s k) t (cert_F (cert_x u a t) k).",
         "Proof.",
         "  intros u a t0 Hs t Ht k Hk.",
         "  assert (Hc : " + " \\/ ".join(f"k = {k}%nat" for k in range(N)) + ") by lia.",
         "  repeat destruct Hc as [Hc | Hc]; subst k; unfold cert_x; simpl."]
    for k in range(N):
        j, which = (k, "Hu") if k < n else (k - n, "Ha")
        L.append(f"  - destruct (Hs t Ht {j}%nat ltac:(lia)) as [Hu Ha]. eapply dlim_ext_value; [|exact {which}].")
        L.append("    unfold cert_F, du_rhs, da_rhs, softmax, zbar, Zsum; simpl; reflexivity.")
    L += ["Qed.",
          "",
          f"Lemma cert_d_from : forall u a, is_tau_solution {n} cert_b u a 0 -> forall t0 h, 0 <= t0 ->",
          "  forall t, t0 <= t <= t0 + h -> forall c, (c < " + str(N) + ")%nat ->",
          "  derivable_pt_lim (fun s => cert_x u a s c) t (cert_F (cert_x u a t) c).",
          "Proof. intros u a Hs t0 h H0 t Ht c Hc. apply (cert_deriv u a 0 Hs t); [lra|exact Hc]. Qed."]
    return L


def _chain_times(chain) -> list[Fraction]:
    times = [Fraction(0)]
    for st in chain[:-1]:
        times.append(times[-1] + st["h"])
    return times


def _step_lines(n: int, chain, P: str, b_unfold: str) -> list[str]:
    """One lemma ``{P}step{k}`` per step of ``chain`` (box B_k at tau_k to B_{k+1}), each from
    ``enclosure_step_autonomous`` with its slope bounds (``{P}slope{k}``) checked by ``interval`` on ``cert_G``."""
    N, times = 2 * n, _chain_times(chain)
    cases = " \\/ ".join(f"c = {c}%nat" for c in range(N))
    L = []
    for k, st in enumerate(chain[:-1]):
        tk, tk1 = coq_real(times[k]), coq_real(times[k + 1])
        B, B1, E, f, h = f"{P}B{k}", f"{P}B{k + 1}", f"{P}E{k}", f"{P}f{k}", f"{P}h{k}"
        L += ["", f"(** Step {k}: tau = {times[k]} to {times[k + 1]}. *)",
              f"Definition {h} : R := {coq_real(st['h'])}.",
              _vec(f"{B}l", st["Bl"]) if k == 0 else "", _vec(f"{E}l", st["El"]), _vec(f"{E}u", st["Eu"]),
              _vec(f"{f}l", st["fl"]), _vec(f"{f}u", st["fu"]),
              _vec(f"{B1}l", chain[k + 1]["Bl"]), _vec(f"{B1}u", chain[k + 1]["Bu"])]
        if k == 0:
            L.append(_vec(f"{B}u", st["Bu"]))
        L += [f"Lemma {P}slope{k} : forall y, in_box {N} {E}l {E}u y -> forall c, (c < {N})%nat ->",
              f"  {f}l c <= cert_F y c <= {f}u c.",
              "Proof.",
              "  intros y Hy c Hc. rewrite (cert_FG y c Hc). "
              + " ".join(f"pose proof (Hy {c}%nat ltac:(lia)) as H{c}." for c in range(N)),
              f"  unfold {E}l, {E}u in *.",
              "  assert (Hc' : " + cases + ") by lia.",
              f"  repeat destruct Hc' as [Hc' | Hc']; subst c; unfold {f}l, {f}u, cert_G, {b_unfold}; simpl; "
              "split; interval.",
              "Qed.",
              f"Lemma {P}step{k} : forall x, (forall t, {tk} <= t <= {tk} + {h} -> forall c,",
              f"    (c < {N})%nat -> derivable_pt_lim (fun s => x s c) t (cert_F (x t) c)) ->",
              f"  in_box {N} {B}l {B}u (x ({tk})) -> in_box {N} {B1}l {B1}u (x ({tk1})).",
              "Proof.",
              f"  intros x Hd Hb. assert (Hh : 0 <= {h}) by (unfold {h}; lra).",
              f"  assert (Hi : forall c, (c < {N})%nat -> {E}l c < {B}l c + {h} * Rmin 0 ({f}l c) /\\",
              f"    {B}u c + {h} * Rmax 0 ({f}u c) < {E}u c).",
              "  { intros c Hc. assert (Hc' : " + cases + ") by lia.",
              f"    repeat destruct Hc' as [Hc' | Hc']; subst c; "
              f"unfold {B}l, {B}u, {E}l, {E}u, {f}l, {f}u, {h}, "
              "Rmin, Rmax; repeat destruct Rle_dec; split; lra. }",
              f"  pose proof (enclosure_step_autonomous {N} cert_F x ({tk}) {h} {B}l {B}u {E}l {E}u "
              f"{f}l {f}u Hh Hd {P}slope{k} Hb Hi) as He.",
              f"  replace ({tk1}) with ({tk} + {h}) by (unfold {h}; lra).",
              "  intros c Hc. specialize (He c Hc). assert (Hc' : " + cases + ") by lia.",
              f"  repeat destruct Hc' as [Hc' | Hc']; subst c; "
              f"unfold {B1}l, {B1}u, {B}l, {B}u, {f}l, {f}u, "
              f"{h} in *; simpl in He; lra.",
              "Qed."]
    return L


def _landing_lines(n: int, i: int, chain, P: str, b_unfold: str) -> list[str]:
    """The proof's tail, after ``HB0 : in_box 2n {P}B0l {P}B0u (cert_x u a 0)``: the steps, the last box in
    R_i^+, and ``softpolar_trapping``."""
    times, K = _chain_times(chain), len(chain) - 1
    tK = coq_real(times[K])
    L, prev = [], "HB0"
    for k in range(K):
        L.append(f"  pose proof ({P}step{k} (cert_x u a) (cert_d_from u a Hs ({coq_real(times[k])}) {P}h{k} "
                 f"ltac:(lra)) {prev}) as HB{k + 1}.")
        if k > 0:
            L.append(f"  clear {prev}.")
        prev = f"HB{k + 1}"
    ucases = " \\/ ".join(f"j = {j}%nat" for j in range(n))
    L += [f"  assert (Hin : in_Rplus {n} {i}%nat (u ({tK})) (a ({tK}))).",
          f"  {{ intros j Hj Hne. pose proof ({prev} {i}%nat ltac:(lia)) as Hwu. "
          f"pose proof ({prev} {n + i}%nat ltac:(lia)) as Hwa.",
          f"    assert (Hc' : {ucases}) by lia.",
          "    repeat destruct Hc' as [Hc' | Hc']; subst j; try (exfalso; apply Hne; reflexivity);",
          f"    match goal with |- u _ ?j <= _ /\\ a _ ?j < _ => pose proof ({prev} j ltac:(lia)) as Hju; "
          f"pose proof ({prev} ({n} + j)%nat ltac:(lia)) as Hja end;",
          f"    unfold cert_x, {P}B{K}l, {P}B{K}u in *; simpl in *; split; lra. }}",
          f"  apply (softpolar_trapping {n} {i}%nat cert_b u a ({tK})); [lia | | | exact Hin].",
          f"  - unfold {b_unfold}; simpl; lra.",
          "  - intros t Ht. apply Hs. lra.",
          "Qed.", ""]
    return L


REPLAY_IMPORTS = ["From Coq Require Import Reals Lra Lia.",
                  "From Interval Require Import Tactic.",
                  "From Softpolar Require Import Calculus Softmax Trapping Enclosure.",
                  "Open Scope R_scope.", ""]


def replay_to_coq(cert: dict, *, h: Fraction | None = None, max_steps: int = REPLAY_COQ_MAX_STEPS) -> str:
    """The Coq file that re-proves a certified point certificate from its initial condition (issue 37).

    Its theorem ``cert_polarizes`` names V(0), a(0) and beta* as exact rationals (u(0) = V(0)^T beta* and
    b = |beta*|^2 are computed by Coq), and states that every solution of the tau-system from that point enters
    R_i^+ by tau_K and polarizes to token i. The proof replays a chain of boxes, one lemma per step, each from
    ``enclosure_step_autonomous`` (Enclosure.v) with slope bounds checked by ``interval`` (on the field's gap form
    ``cert_G``, proven equal to the field with ``field``) and inclusions by ``lra``; ``softpolar_trapping``
    finishes.

    ``h``: every step of that length (:func:`replay_chain`); ``None`` (default): the shortest chain of
    :func:`coq_chain`. Raises InvalidArgument when no chain of at most ``max_steps`` steps lands in R_i^+."""
    if not isinstance(cert, dict) or cert.get("status") != "certified":
        raise InvalidArgument("cert: expected a certified polarization certificate (status 'certified')")

    init = parse_init(cert["init"])
    u0, a0, b = init.exact()
    n, d, i = init.n, init.d, cert["winner"]
    V = [[_fraction(x) for x in row] for row in init.V]
    w = [_fraction(x) for x in init.target]
    chain = (coq_chain(cert, max_steps=max_steps) if h is None
             else replay_chain(u0, a0, b, i, h=h, max_steps=max_steps))
    times, K = _chain_times(chain), len(chain) - 1
    N, bu = 2 * n, "cert_b, cert_beta"
    L = ["(* Written by softpolar certify --coq (issue 37): Coq re-proves the certificate from its initial",
         "   condition; the interval integrator is not trusted. Coq checks every step itself: the a-priori",
         "   enclosure theorem (Enclosure.v), slope bounds with Interval's `interval`, inclusions with `lra`;",
         "   softpolar_trapping finishes. Trusted: Coq, its classical-reals axioms and the primitive-integer and",
         "   -float specifications Interval computes with; the existence axiom is not used by this theorem; the",
         "   (V, a) -> (u, a) reduction u = V^T beta* is proven in Coq for every n, d (Reduction.v), and",
         "   cert_model_polarizes, at the end, carries the certificate to every (V, a) gradient flow from V(0), a(0)",
         "   (the clock tau and its inverse time change sigma are hypotheses of that statement).",
         "   Compare the statement with a certificate: python -m theorems.coq check THIS.v CERT.json *)",
         *REPLAY_IMPORTS,
         f"(** The certificate's initial condition: n = {n} tokens, d = {d}, winner token {i} (from 0). *)"]
    defs, thm = statement(V, w, a0, i, coq_real(times[K]))
    L += defs + _field_lines(n, bu) + _step_lines(n, chain, "", bu)
    cases = " \\/ ".join(f"c = {c}%nat" for c in range(N))
    L += ["",
          "(** The certificate, re-proved from its initial condition: every solution of the tau-system with",
          f"    u(0) = V(0)^T beta*, a(0) as given and b = |beta*|^2 is in R_{i}^+ from tau = {times[K]} on",
          f"    and polarizes to token {i}. *)",
          *thm[:-1],
          "Proof.",
          "  intros u a Hs H0.",
          f"  assert (HB0 : in_box {N} B0l B0u (cert_x u a 0)).",
          "  { intros c Hc. assert (Hc' : " + cases + ") by lia.",
          "    repeat destruct Hc' as [Hc' | Hc']; subst c; unfold cert_x; simpl."]
    for c in range(N):
        j = c if c < n else c - n
        proj = "proj1" if c < n else "proj2"
        L.append(f"    - rewrite ({proj} (H0 {j}%nat ltac:(lia))). unfold cert_u0, cert_a0, cert_V0, cert_beta, "
                 "B0l, B0u; simpl; split; lra.")
    L += ["  }"] + _landing_lines(n, i, chain, "", bu)
    L += model_theorem(n, d, i, coq_real(times[K]))
    return "\n".join(L)


def box_chain(lo, hi, b, winner: int, *, max_steps: int = REPLAY_COQ_MAX_STEPS):
    """The shortest replay chain among :data:`REPLAY_SCHEMES` from the box [lo, hi] of initial states (2n exact
    ends each: u then a). Raises InvalidArgument naming why when none lands in R_winner^+."""
    n = len(lo) // 2
    return _shortest_chain(lambda scheme: replay_chain(lo[:n], lo[n:], b, winner, upper=(hi[:n], hi[n:]),
                                                       max_steps=max_steps, **scheme))


def box_replay_to_coq(n: int, b, boxes, *, label: str = "box") -> str:
    """The Coq file that re-proves atlas boxes from their initial boxes (issue 37, the atlas through the replay).

    ``boxes``: records with ``name``, ``winner``, ``lo`` and ``hi`` (2n exact ends each: u(0) then a(0); the box of
    initial states, e.g. the range of an atlas box's affine slice) and ``chain`` (from :func:`box_chain`). One
    theorem ``{label}_{name}_polarizes`` per box: every solution of the tau-system with b as given whose initial
    state lies in [lo, hi] is in R_i^+ from tau_K on and polarizes to token i. Each proof replays its chain (the
    same step lemmas as :func:`replay_to_coq`); the integrator is not trusted."""
    b = exact_rational(b, "b")
    if not (isinstance(n, int) and n >= 2) or b <= 0:
        raise InvalidArgument(f"n={n!r}, b={b}: expected n >= 2 and b > 0")
    N = 2 * n
    L = ["(* Written by softpolar (issue 37): Coq re-proves atlas boxes from their boxes of initial states; the",
         "   interval integrator is not trusted. Each step: the a-priori enclosure theorem (Enclosure.v), slope",
         "   bounds with Interval's `interval`, inclusions with `lra`; softpolar_trapping finishes. Trusted: Coq,",
         "   its classical-reals axioms and the primitive-integer and -float specifications Interval computes",
         "   with; the existence axiom is not used. *)",
         *REPLAY_IMPORTS,
         f"Definition cert_b : R := {coq_real(b)}."]
    L += _field_lines(n, "cert_b")
    for box in boxes:
        P = _ident(label) + "_" + re.sub(r"\W", "_", str(box["name"])) + "_"
        i, chain = box["winner"], box["chain"]
        lo = [exact_rational(x, "lo") for x in box["lo"]]
        hi = [exact_rational(x, "hi") for x in box["hi"]]
        if len(lo) != N or len(hi) != N or not (isinstance(i, int) and 0 <= i < n):
            raise InvalidArgument(f"box {box['name']!r}: expected {N} ends in lo and hi and 0 <= winner < {n}")
        if chain[0]["Bl"] != lo or chain[0]["Bu"] != hi:
            raise InvalidArgument(f"box {box['name']!r}: its chain does not start at [lo, hi]")
        times, K = _chain_times(chain), len(chain) - 1
        L += ["", f"(** Box {box['name']}: initial states in [{P}lo, {P}hi], winner token {i}. *)",
              _vec(f"{P}lo", lo), _vec(f"{P}hi", hi)]
        L += _step_lines(n, chain, P, "cert_b")
        L += ["", f"Theorem {P}polarizes : forall u a, is_tau_solution {n} cert_b u a 0 ->",
              f"  (forall k, (k < {n})%nat -> {P}lo k <= u 0 k <= {P}hi k /\\ "
              f"{P}lo ({n} + k)%nat <= a 0 k <= {P}hi ({n} + k)%nat) ->",
              f"  (forall t, {coq_real(times[K])} <= t -> in_Rplus {n} {i}%nat (u t) (a t)) /\\",
              f"  (forall j, (j < {n})%nat -> j <> {i}%nat -> tends_to_infty (fun t => a t {i}%nat - a t j)) /\\",
              f"  (forall k, (k < {n})%nat -> tends_to (fun t => softmax {n} (a t) k) "
              f"(if Nat.eq_dec k {i}%nat then 1 else 0)).",
              "Proof.",
              "  intros u a Hs H0.",
              f"  assert (HB0 : in_box {N} {P}B0l {P}B0u (cert_x u a 0)).",
              "  { intros c Hc. assert (Hc' : " + " \\/ ".join(f"c = {c}%nat" for c in range(N)) + ") by lia.",
              "    repeat destruct Hc' as [Hc' | Hc']; subst c; unfold cert_x; simpl."]
        for c in range(N):
            j = c if c < n else c - n
            L.append(f"    - pose proof (H0 {j}%nat ltac:(lia)) as Hj. unfold {P}lo, {P}hi, {P}B0l, {P}B0u in *; "
                     "simpl in *; lra.")
        L += ["  }"] + _landing_lines(n, i, chain, P, "cert_b")
    return "\n".join(L)
