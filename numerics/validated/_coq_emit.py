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

import math
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


def _slopes(El, Eu, n: int, b: Fraction):
    """Outward bounds of the tau-system's field over the box [El, Eu] (naive interval evaluation, the expression
    Coq evaluates), widened by :data:`REPLAY_SLACK`."""
    from mpmath import iv
    iv.prec = 80
    # float() of the box ends can round inward: widen them by one ulp-sized step before evaluating
    y = [iv.mpf([float(El[k]) - abs(float(El[k])) * 2e-16 - 1e-300, float(Eu[k]) + abs(float(Eu[k])) * 2e-16 + 1e-300])
         for k in range(2 * n)]
    u, a = y[:n], y[n:]
    e = [iv.exp(x) for x in a]
    Z = e[0]
    for x in e[1:]:
        Z = Z + x
    s = [ek / Z for ek in e]
    zb = s[0] * u[0]
    for j in range(1, n):
        zb = zb + s[j] * u[j]
    bi = iv.mpf([float(b) * (1 - 2e-16), float(b) * (1 + 2e-16)])
    f = [bi * s[k] for k in range(n)] + [s[k] * (u[k] - zb) for k in range(n)]
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
        slopes = _slopes(El, Eu, n, b)
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
                 steps_h=None):
    """Boxes B_0 = {(u0, a0)}, B_1, ... at tau_{k+1} = tau_k + h_k, each with its a-priori box E_k and slope bounds,
    until B_K lies in R_winner^+ (u_i >= u_j, a_i > a_j). Returns the list of step dicts (each with its ``h``; the
    last holds only B_K).

    ``steps_h``: the step lengths to choose from, longest first (``None``: every step is ``h``); a step takes the
    longest of them whose box grows per unit time at most twice as fast as with the shortest (the shortest when
    none does). Raises InvalidArgument when the chain does not land in R_i^+ within ``max_steps`` steps or the
    boxes grow too wide (the first-order enclosure loses the solution's contraction)."""
    n = len(u0)
    Bl = [Fraction(x) for x in list(u0) + list(a0)]
    Bu = list(Bl)
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


#: The schemes :func:`coq_chain` tries (keyword arguments of :func:`replay_chain`): the fixed step, and adaptive steps
#: from 1/4 down to 1/128.
REPLAY_SCHEMES = ({"h": REPLAY_STEP}, {"steps_h": tuple(Fraction(1, 2 ** j) for j in range(2, 8))})
#: The most steps a Coq replay file may have (about 0.9 CPU s of coqc each, coqc 8.16, Interval 4): a longer chain is
#: not emitted, and ``certify --coq`` falls back to the closure at tau* (saying that Coq did not check the rest).
REPLAY_COQ_MAX_STEPS = 160


def coq_chain(cert: dict, *, max_steps: int = REPLAY_COQ_MAX_STEPS):
    """The shortest replay chain for a certified point certificate among :data:`REPLAY_SCHEMES` (at most
    ``max_steps`` steps). The chain is recomputed from the initial condition: the certificate's own enclosures are
    not used (nor trusted). Raises InvalidArgument naming why when no scheme lands in R_i^+."""
    from ._certify import parse_init
    init = parse_init(cert["init"])
    u0, a0, b = init.exact()
    best, why = None, []
    for scheme in REPLAY_SCHEMES:
        try:
            chain = replay_chain(u0, a0, b, cert["winner"], max_steps=max_steps, **scheme)
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


def replay_to_coq(cert: dict, *, h: Fraction | None = None, max_steps: int = REPLAY_COQ_MAX_STEPS) -> str:
    """The Coq file that re-proves a certified point certificate from its initial condition (issue 37).

    Its theorem ``cert_polarizes`` names V(0), a(0) and beta* as exact rationals (u(0) = V(0)^T beta* and
    b = |beta*|^2 are computed by Coq), and states that every solution of the tau-system from that point enters
    R_i^+ by tau_K and polarizes to token i. The proof replays a chain of boxes, one lemma per step, each from
    ``enclosure_step_autonomous`` (Enclosure.v) with slope bounds checked by ``interval`` and inclusions by ``lra``;
    ``softpolar_trapping`` finishes.

    ``h``: every step of that length (:func:`replay_chain`); ``None`` (default): the shortest chain of
    :func:`coq_chain`. Raises InvalidArgument when no chain of at most ``max_steps`` steps lands in R_i^+."""
    if not isinstance(cert, dict) or cert.get("status") != "certified":
        raise InvalidArgument("cert: expected a certified polarization certificate (status 'certified')")
    from theorems.coq.certstatement import statement

    from ._certify import _fraction, parse_init
    init = parse_init(cert["init"])
    u0, a0, b = init.exact()
    n, d, i = init.n, init.d, cert["winner"]
    V = [[_fraction(x) for x in row] for row in init.V]
    w = [_fraction(x) for x in init.target]
    chain = (coq_chain(cert, max_steps=max_steps) if h is None
             else replay_chain(u0, a0, b, i, h=h, max_steps=max_steps))
    K = len(chain) - 1
    times = [Fraction(0)]
    for st in chain[:-1]:
        times.append(times[-1] + st["h"])
    N = 2 * n
    L = ["(* Written by softpolar certify --coq (issue 37): Coq re-proves the certificate from its initial",
         "   condition; the interval integrator is not trusted. Coq checks every step itself: the a-priori",
         "   enclosure theorem (Enclosure.v), slope bounds with Interval's `interval`, inclusions with `lra`;",
         "   softpolar_trapping finishes. Trusted: Coq, its classical-reals axioms and the primitive-integer and",
         "   -float specifications Interval computes with; the existence axiom is not used by this theorem; the",
         "   (V, a) -> (u, a) reduction u = V^T beta* is proven by SymPy at this n, d, not in Coq.",
         "   Compare the statement with a certificate: python -m theorems.coq check THIS.v CERT.json *)",
         "From Coq Require Import Reals Lra Lia.",
         "From Interval Require Import Tactic.",
         "From Softpolar Require Import Calculus Softmax Trapping Enclosure.",
         "Open Scope R_scope.", "",
         f"(** The certificate's initial condition: n = {n} tokens, d = {d}, winner token {i} (from 0). *)"]
    tK = coq_real(times[K])
    defs, thm = statement(V, w, a0, i, tK)
    L += defs
    L += ["",
          "(** The state as one vector: components 0..n-1 are u, n..2n-1 are a. *)",
          "Definition cert_F (y : nat -> R) (k : nat) : R :=",
          f"  if Nat.ltb k {n} then du_rhs {n} cert_b (fun j => y j) (fun j => y ({n} + j)%nat) k",
          f"  else da_rhs {n} (fun j => y j) (fun j => y ({n} + j)%nat) (k - {n}).",
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
    L.append("Qed.")
    # the steps
    cases = " \\/ ".join(f"c = {c}%nat" for c in range(N))
    for k, st in enumerate(chain[:-1]):
        tk, tk1 = coq_real(times[k]), coq_real(times[k + 1])
        L += ["", f"(** Step {k}: tau = {times[k]} to {times[k + 1]}. *)",
              f"Definition h{k} : R := {coq_real(st['h'])}.",
              _vec(f"B{k}l", st["Bl"]) if k == 0 else "", _vec(f"E{k}l", st["El"]), _vec(f"E{k}u", st["Eu"]),
              _vec(f"f{k}l", st["fl"]), _vec(f"f{k}u", st["fu"]),
              _vec(f"B{k + 1}l", chain[k + 1]["Bl"]), _vec(f"B{k + 1}u", chain[k + 1]["Bu"])]
        if k == 0:
            L.append(_vec("B0u", st["Bu"]))
        L += [f"Lemma slope{k} : forall y, in_box {N} E{k}l E{k}u y -> forall c, (c < {N})%nat ->",
              f"  f{k}l c <= cert_F y c <= f{k}u c.",
              "Proof.",
              "  intros y Hy c Hc. " + " ".join(f"pose proof (Hy {c}%nat ltac:(lia)) as H{c}." for c in range(N)),
              f"  unfold E{k}l, E{k}u in *.",
              "  assert (Hc' : " + " \\/ ".join(f"c = {c}%nat" for c in range(N)) + ") by lia.",
              f"  repeat destruct Hc' as [Hc' | Hc']; subst c; unfold f{k}l, f{k}u, cert_F, du_rhs, da_rhs, softmax, "
              "zbar, Zsum, cert_b, cert_beta; simpl; split; interval.",
              "Qed.",
              f"Lemma step{k} : forall x, (forall t, {tk} <= t <= {tk} + h{k} -> forall c,",
              f"    (c < {N})%nat -> derivable_pt_lim (fun s => x s c) t (cert_F (x t) c)) ->",
              f"  in_box {N} B{k}l B{k}u (x ({tk})) -> in_box {N} B{k + 1}l B{k + 1}u (x ({tk1})).",
              "Proof.",
              f"  intros x Hd Hb. assert (Hh : 0 <= h{k}) by (unfold h{k}; lra).",
              f"  assert (Hi : forall c, (c < {N})%nat -> E{k}l c < B{k}l c + h{k} * Rmin 0 (f{k}l c) /\\",
              f"    B{k}u c + h{k} * Rmax 0 (f{k}u c) < E{k}u c).",
              "  { intros c Hc. assert (Hc' : " + cases + ") by lia.",
              f"    repeat destruct Hc' as [Hc' | Hc']; subst c; "
              f"unfold B{k}l, B{k}u, E{k}l, E{k}u, f{k}l, f{k}u, h{k}, "
              "Rmin, Rmax; repeat destruct Rle_dec; split; lra. }",
              f"  pose proof (enclosure_step_autonomous {N} cert_F x ({tk}) h{k} B{k}l B{k}u E{k}l E{k}u "
              f"f{k}l f{k}u Hh Hd slope{k} Hb Hi) as He.",
              f"  replace ({tk1}) with ({tk} + h{k}) by (unfold h{k}; lra).",
              "  intros c Hc. specialize (He c Hc). assert (Hc' : " + cases + ") by lia.",
              f"  repeat destruct Hc' as [Hc' | Hc']; subst c; "
              f"unfold B{k + 1}l, B{k + 1}u, B{k}l, B{k}u, f{k}l, f{k}u, "
              f"h{k} in *; simpl in He; lra.",
              "Qed."]
    ucases = " \\/ ".join(f"j = {j}%nat" for j in range(n))
    L += ["", f"Lemma cert_d_from : forall u a, is_tau_solution {n} cert_b u a 0 -> forall t0 h, 0 <= t0 ->",
          "  forall t, t0 <= t <= t0 + h -> forall c, (c < " + str(N) + ")%nat ->",
          "  derivable_pt_lim (fun s => cert_x u a s c) t (cert_F (cert_x u a t) c).",
          "Proof. intros u a Hs t0 h H0 t Ht c Hc. apply (cert_deriv u a 0 Hs t); [lra|exact Hc]. Qed.",
          "",
          "(** The certificate, re-proved from its initial condition: every solution of the tau-system with",
          f"    u(0) = V(0)^T beta*, a(0) as given and b = |beta*|^2 is in R_{i}^+ from tau = {times[K]} on",
          f"    and polarizes to token {i}. *)",
          *thm[:-1],
          "Proof.",
          "  intros u a Hs H0.",
          f"  assert (HB0 : in_box {N} B0l B0u (cert_x u a 0)).",
          "  { intros c Hc. assert (Hc' : " + cases + ") by lia.",
          "    repeat destruct Hc' as [Hc' | Hc']; subst c; unfold cert_x; simpl."]
    bul = []
    for c in range(N):
        j = c if c < n else c - n
        proj = "proj1" if c < n else "proj2"
        bul.append(f"    - rewrite ({proj} (H0 {j}%nat ltac:(lia))). unfold cert_u0, cert_a0, cert_V0, cert_beta, "
                   "B0l, B0u; simpl; split; lra.")
    L += bul + ["  }"]
    prev = "HB0"
    for k in range(K):
        L.append(f"  pose proof (step{k} (cert_x u a) (cert_d_from u a Hs ({coq_real(times[k])}) h{k} ltac:(lra)) "
                 f"{prev}) "
                 f"as HB{k + 1}.")
        if k > 0:
            L.append(f"  clear {prev}.")
        prev = f"HB{k + 1}"
    L += [f"  assert (Hin : in_Rplus {n} {i}%nat (u ({tK})) (a ({tK}))).",
          f"  {{ intros j Hj Hne. pose proof ({prev} {i}%nat ltac:(lia)) as Hwu. "
          f"pose proof ({prev} {n + i}%nat ltac:(lia)) as Hwa.",
          f"    assert (Hc' : {ucases}) by lia.",
          "    repeat destruct Hc' as [Hc' | Hc']; subst j; try (exfalso; apply Hne; reflexivity);",
          f"    match goal with |- u _ ?j <= _ /\\ a _ ?j < _ => pose proof ({prev} j ltac:(lia)) as Hju; "
          f"pose proof ({prev} ({n} + j)%nat ltac:(lia)) as Hja end;",
          f"    unfold cert_x, B{K}l, B{K}u in *; simpl in *; split; lra. }}",
          f"  apply (softpolar_trapping {n} {i}%nat cert_b u a ({tK})); [lia | | | exact Hin].",
          "  - unfold cert_b, cert_beta; simpl; lra.",
          "  - intros t Ht. apply Hs. lra.",
          "Qed.", ""]
    return "\n".join(x for x in L if x is not None)
