r"""softmax1 after the escape: a clock in which the take-over is not stiff, and a trapping region [D].

The reduced logistic system of softmax1 (:func:`theorems.sinks.softmax1_tau_system`), with
$\varphi=\mathrm{softmax1}(a)$, the sink's weight $\varphi_0=1/(1+\sum_je^{a_j})$ and
$J=\operatorname{diag}(\varphi)-\varphi\varphi^\top$:

.. math:: \frac{du}{d\tau}=b\,\varphi,\qquad\frac{da}{d\tau}=J^\top u
          \qquad\Big(\frac{da_k}{d\tau}=\varphi_k(u_k-z),\ z=\langle u,\varphi\rangle\Big).

The second clock [D]
====================
In the log clock $\sigma=\log\tau$ the sink phase is benign (rates $O(1)$), but once the top real
token takes weight $O(1)$ at $\tau\approx e^{17}$ or later the rates are $\tau\cdot O(1)$: the
take-over is stiff there. In $\tau$ itself it is the other way round. The clock $\theta$ with

.. math:: \frac{d\tau}{d\theta}=c:=\frac{1}{\frac1{1+\tau}+m},\qquad m=\sum_k\varphi_k=1-\varphi_0

(the real tokens' mass) is both: in the sink phase $m\approx\sum_k1/(|u_k|\tau)$, so
$c=\Theta(\tau)$ and $\theta\approx(1+\sum_k1/|u_k|)\log\tau$; once a real token holds weight
$O(1)$, $c=\Theta(1)$ and $\theta\approx\tau$. The Jacobian of the $\tau$-field is $O(m\max|u|)$ (every
entry carries a factor $\varphi_k$), and $c\,m\le1$, so the $\theta$-field's rates are $O(\max|u|)$
throughout: :func:`softmax1_theta_system`. Starting at $\tau=0$ is allowed ($c=1/(1+m)$).

The trapping region of softmax1 [D]
===================================
SINK1 says softmax1 is softmax over $n+1$ tokens with the sink's logit and projection frozen at 0.
The analogue of the softmax region $R_i$ keeps the sink as a competitor:

.. math:: R^{(1)}_i=\{u_i\ge u_j,\ a_i\ge a_j\ (j\ne i),\ u_i\ge0,\ a_i\ge0\},\qquad
          R^{(1)+}_i:\ \text{the same with } a_i>a_j,\ a_i>0 .

**Lemma [D].** *Along the reduced system, with $b>0$:*

1. *(sign facts, proven here exactly for the sizes given)* on all of $R^{(1)}_i$ the gap derivatives
   $\frac d{d\tau}(u_i-u_j)$, $\frac d{d\tau}(a_i-a_j)$, $\frac{du_i}{d\tau}$, $\frac{da_i}{d\tau}$ are
   $\ge0$ (so $R^{(1)}_i$ is forward invariant); $(n+1)\varphi_i\ge1$; the rates
   $\frac d{d\tau}(u_i-u_j)\ge\frac b{n+1}(1-e^{a_j-a_i})$, $\frac{du_i}{d\tau}\ge\frac b{n+1}$,
   $\frac d{d\tau}(a_i-a_j)\ge\varphi_j(u_i-u_j)$, $\frac{da_i}{d\tau}\ge\varphi_i\varphi_0u_i$; and on the face
   $u_i=u_j$ with $a_i>a_j$ the $u$-gap derivative is $b\varphi_i(1-e^{a_j-a_i})>0$.
2. *(argued, as for softmax in* :mod:`theorems.trapping` *)* from $R^{(1)+}_i$ the solution stays in
   it; $u_i\ge\frac b{n+1}(\tau-\tau_0)$ and $u_i-u_j\ge\kappa_j(\tau-\tau_0)$; if $a_i$ stayed below $G$,
   $\varphi_0\ge1/(1+ne^G)$ and $\dot a_i\ge\varphi_i\varphi_0u_i\ge\varphi_0u_i/(n+1)$ would make $a_i$
   grow quadratically, so
   $a_i\to\infty$ ($\varphi_0\to0$); the same argument on $a_i-a_j$ with $\varphi_j=\varphi_ie^{-(a_i-a_j)}$
   gives $a_i-a_j\to\infty$. Hence $\varphi\to e_i$: the top real token takes all the weight.
   $\tau(t)\to\infty$ for the logistic loss as in the softmax lemma.

The proof of 1. writes the region in coordinates that make it an orthant: $u_i=P$ ($P\ge0$),
$u_j=P-p_j$, $e^{a_i}=1+r_0$, $e^{a_j}=e^{a_i}/(1+r_j)$ ($p,r\ge0$); every derivative is then a
ratio of polynomials, certified $\ge0$ by the exact positivity test of :mod:`theorems.trapping`
(all coefficients $\ge0$), or refuted by an exact rational point.

*Controls* (the same prover must refuse them): the region without $u_i\ge0$ (the softmax region
transplanted, which ignores the sink's projection): on its face $a_i=0$ the derivative
$\varphi_i(u_i-z)$ is negative at an exact point (the sink phase itself: every $u<0$); the winner weight
$(n+1)\varphi_i\ge1$ on the region without $a_i\ge0$; and the $a$-gap rate with $\varphi_i$ in place of
$\varphi_j$.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from .errors import InvalidArgument, check_choice, check_int
from .proof import ProofResult, prove_zero
from . import sinks
from .trapping import SignCheck, _positivity_certificate, replace_exp, _search_negative

#: region kinds: the lemma's region, and the two controls
SINK_REGION_KINDS = ("R1", "no-u-sink", "no-a-sink")


@dataclass(frozen=True)
class Softmax1System:
    r"""The reduced logistic system of softmax1 for ``n`` real tokens in the clock $\tau$.

    ``u``, ``a``: ``n x 1`` real symbols; ``b`` positive; ``phi`` = softmax1(a) (the link's
    definition); ``sink`` = $1-\sum\varphi$; ``du`` = $b\varphi$; ``da`` = $J^\top u$ (the link's
    structured Jacobian).
    """

    n: int
    u: sp.Matrix
    a: sp.Matrix
    b: sp.Symbol
    phi: sp.Matrix
    sink: sp.Expr
    du: sp.Matrix
    da: sp.Matrix

    def lie(self, expr) -> sp.Expr:
        r"""$\frac{d}{d\tau}\mathrm{expr}(u,a)$ along the system (chain rule)."""
        out = sp.Add(*[sp.diff(expr, x) * dx for x, dx in zip(self.u, self.du)])
        return out + sp.Add(*[sp.diff(expr, x) * dx for x, dx in zip(self.a, self.da)])


def softmax1_system(n: int) -> Softmax1System:
    """Build the softmax1 tau-system for ``n >= 1`` real tokens from the link's definition.

    The link is read from :data:`theorems.sinks.SOFTMAX1` at call time (so a planted bug there reaches
    every fact derived here); the system is cached per ``(n, link)``."""
    check_int("n", n, minimum=1)
    return _system(n, sinks.SOFTMAX1)


@lru_cache(maxsize=None)
def _system(n: int, SOFTMAX1) -> Softmax1System:
    u = sp.Matrix([sp.Symbol(f"u_{k + 1}", real=True) for k in range(n)])
    a = sp.Matrix([sp.Symbol(f"a_{k + 1}", real=True) for k in range(n)])
    b = sp.Symbol("b", positive=True)
    phi = SOFTMAX1.phi(a)
    J = SOFTMAX1.jacobian_structured(a)
    return Softmax1System(n, u, a, b, phi, 1 - sum(phi), b * phi, J.T * u)


def theta_clock(tau, mass):
    r"""$c=d\tau/d\theta=1/(1/(1+\tau)+m)$, $m$ the real tokens' mass."""
    return 1 / (1 / (1 + tau) + mass)


def softmax1_theta_system(n: int):
    r"""The system in the clock $\theta$ (module docstring): ``(args, rhs, extras)``.

    ``args`` = ``[tau, u_1..u_n, a_1..a_n, b]``; ``rhs`` = $(c,\ c\,b\varphi,\ c\,J^\top u)$, the
    derivatives of $(\tau,u,a)$ in $\theta$; ``extras``: ``phi``, ``sink``, ``clock`` ($c$).
    """
    S = softmax1_system(n)
    tau = sp.Symbol("tau", nonnegative=True)
    c = theta_clock(tau, sum(S.phi))
    rhs = [c, *(c * S.du), *(c * S.da)]
    return [tau, *S.u, *S.a, S.b], rhs, {"phi": S.phi, "sink": S.sink, "clock": c, "system": S}


def rewrite_proofs(ns=(1, 2, 3)) -> list[tuple[str, ProofResult]]:
    r"""The rewrites the $\theta$-clock engines use, proven with :func:`prove_zero` for each ``n``:

    * ``clock``: $c=(1+\tau)(1+E)/(1+E+(1+\tau)E)$, $E=\sum_je^{a_j}$ (the form the certifier evaluates);
    * ``a-field``: $(J^\top u)_k=\varphi_k(u_k-z)$;
    * ``sink``: $d\varphi_0/d\tau=-\varphi_0\sum_k\varphi_k\,\dot a_k$ and
      $d\varphi_k/d\tau=\varphi_k(\dot a_k-\sum_m\varphi_m\dot a_m)$ (the augmented, polynomial form);
    * ``clock derivative``: $dc/d\theta=c^3(\rho^2-\varphi_0\sum_k\varphi_k(J^\top u)_k)$ with
      $\rho=1/(1+\tau)$.
    """
    out = []
    for n in ns:
        args, rhs, ex = softmax1_theta_system(n)
        S, tau, c = ex["system"], args[0], ex["clock"]
        E = sum(sp.exp(x) for x in S.a)
        out.append((f"clock n={n}", prove_zero(c - (1 + tau) * (1 + E) / (1 + E + (1 + tau) * E))))
        z = sum(p * x for p, x in zip(S.phi, S.u))
        out.append((f"a-field n={n}", prove_zero([S.da[k] - S.phi[k] * (S.u[k] - z) for k in range(n)])))
        weighted = sum(p * d for p, d in zip(S.phi, S.da))
        out.append((f"sink n={n}", prove_zero([S.lie(S.sink) + S.sink * weighted,
                                               *[S.lie(S.phi[k]) - S.phi[k] * (S.da[k] - weighted)
                                                 for k in range(n)]])))
        dc = sp.diff(c, tau) * c + c * S.lie(c)  # d/dtheta = c d/dtau; c depends on tau and a
        rho = 1 / (1 + tau)
        out.append((f"clock derivative n={n}", prove_zero(dc - c**3 * (rho**2 - S.sink * weighted))))
        v, (du_v, dv_v) = inverse_weight_field(n)
        back = {vk: sp.exp(-ak) for vk, ak in zip(v, S.a)}
        out.append((f"inverse weights n={n}", prove_zero(
            [*(du_v[k].xreplace(back) - S.du[k] for k in range(n)),
             *(dv_v[k].xreplace(back) + sp.exp(-S.a[k]) * S.da[k] for k in range(n))])))
    return out


def inverse_weight_field(n: int):
    r"""The system in the inverse weights $v_k=e^{-a_k}$ [D]: ``(v, (du, dv))`` with
    $\dot u_k=b\varphi_0/v_k$, $\dot v_k=\varphi_0(z-u_k)$, $\varphi_0=1/(1+\sum_j1/v_j)$,
    $z=\varphi_0\sum_ju_j/v_j$ (the certifier's coordinates: :mod:`numerics.validated.sink_cert`)."""
    S = softmax1_system(n)
    v = [sp.Symbol(f"v_{k + 1}", positive=True) for k in range(n)]
    phi0 = 1 / (1 + sum(1 / x for x in v))
    z = phi0 * sum(uk / vk for uk, vk in zip(S.u, v))
    return v, ([S.b * phi0 / vk for vk in v], [phi0 * (z - uk) for uk in S.u])


# ---------------------------------------------------------------------------------------
# the trapping region of softmax1
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SinkRegion:
    r"""$R^{(1)}_i$ for real token ``winner`` (0-based) of ``n``; ``kind`` ``R1`` or a control."""

    n: int
    winner: int
    kind: str

    @property
    def u_sink(self) -> bool:
        return self.kind != "no-u-sink"

    @property
    def a_sink(self) -> bool:
        return self.kind != "no-a-sink"

    def describe(self) -> str:
        i = self.winner + 1
        parts = [f"u_{i} >= u_{j + 1}, a_{i} >= a_{j + 1}" for j in range(self.n) if j != self.winner]
        parts += [f"u_{i} >= 0"] if self.u_sink else []
        parts += [f"a_{i} >= 0"] if self.a_sink else []
        return "{" + ", ".join(parts) + "}"


def sink_region(n: int, winner: int = 0, kind: str = "R1") -> SinkRegion:
    check_int("n", n, minimum=1)
    check_choice("kind", kind, SINK_REGION_KINDS)
    if isinstance(winner, bool) or not isinstance(winner, int) or not 0 <= winner < n:
        raise InvalidArgument(f"winner={winner!r} is not allowed; expected an integer in [0, {n - 1}]")
    return SinkRegion(n, winner, kind)


def _region_coordinates(R: SinkRegion, S: Softmax1System):
    """Substitutions making the region an orthant, the variable classes, and each face's zero variable."""
    i = R.winner
    nonneg, positive, free, faces = [], [S.b], [], {}
    if R.u_sink:
        U = sp.Symbol("P", nonnegative=True)
        nonneg.append(U)
        faces["u_sink"] = U
    else:
        U = sp.Symbol("U", real=True)
        free.append(U)
    if R.a_sink:
        r0 = sp.Symbol("r_0", nonnegative=True)
        E = 1 + r0
        nonneg.append(r0)
        faces["a_sink"] = r0
    else:
        E = sp.Symbol("E", positive=True)
        positive.append(E)
    u_sub, exp_sub = {S.u[i]: U}, {S.a[i]: E}
    for j in range(R.n):
        if j == i:
            continue
        p, r = sp.Symbol(f"p_{j + 1}", nonnegative=True), sp.Symbol(f"r_{j + 1}", nonnegative=True)
        u_sub[S.u[j]], exp_sub[S.a[j]] = U - p, E / (1 + r)
        nonneg += [p, r]
        faces[("u", j)], faces[("a", j)] = p, r
    return u_sub, exp_sub, nonneg, positive, free, faces


def decide_on_region(R: SinkRegion, expr, *, what: str, zero=(), strict: bool = False,
                     tries: int = 300, seed: int = 0) -> SignCheck:
    r"""Decide ``expr >= 0`` (``> 0`` if ``strict``) on ``R`` (with the faces in ``zero`` active).

    ``expr`` is a function of the system's $u$, $a$, $b$. ``proved``: an exact positivity certificate
    (for ``strict``: the numerator also has a monomial in strictly positive variables only, so it
    never vanishes); ``disproved``: an exact point of the region where it is $<0$ (or, for ``strict``,
    $=0$ is not searched: ``undecided``).
    """
    S = softmax1_system(R.n)
    u_sub, exp_sub, nonneg, positive, free, faces = _region_coordinates(R, S)
    e = replace_exp(sp.sympify(expr), list(S.a), exp_sub).xreplace(u_sub)
    for f in zero:
        e = e.xreplace({faces[f]: 0})
        nonneg = [v for v in nonneg if v != faces[f]]
    e = sp.cancel(sp.together(e))
    used = e.free_symbols
    nonneg = [v for v in nonneg if v in used]
    positive = [v for v in positive if v in used]
    free = [v for v in free if v in used]
    if not used:  # a constant (e.g. a one-token softmax): decided by its sign alone
        if (e > 0) if strict else (e >= 0):
            return SignCheck(what, "proved", "constant", f"the expression is the constant {e}")
        return SignCheck(what, "disproved", "constant", f"the expression is the constant {e}", {"any point": "0"})
    if not free:
        ok, detail = _positivity_certificate(e, nonneg, positive)
        if ok and strict:
            num = sp.fraction(sp.cancel(sp.together(e)))[0]
            if num == 0:
                ok, detail = False, "identically zero, not > 0"
            else:
                pn = sp.Poly(num, *(nonneg + positive)) if nonneg + positive else None
                pos_idx = {len(nonneg) + k for k in range(len(positive))}
                ok = pn is None or any(all(x == 0 or k in pos_idx for k, x in enumerate(m)) for m in pn.monoms())
                detail += "; numerator has a monomial in positive variables only" if ok else \
                    "; the numerator may vanish"
        if ok:
            return SignCheck(what, "proved", "positivity certificate", detail)
    point, value = _search_negative(e, nonneg, positive, free, tries=tries, seed=seed)
    if point is not None:
        return SignCheck(what, "disproved", "exact point", f"value {value} < 0",
                         {str(k): str(v) for k, v in point.items()})
    return SignCheck(what, "undecided", "no certificate, no negative point found", "")


def region_sign_facts(n: int, winner: int = 0) -> dict[str, SignCheck]:
    """Every sign fact of the lemma (item 1) for ``n`` real tokens: each must be ``proved``."""
    R = sink_region(n, winner, "R1")
    S = softmax1_system(n)
    i = winner
    out = {}
    out[f"n={n}: face u_i = 0: du_i/dtau >= 0"] = decide_on_region(R, S.du[i], what="du_i >= 0 on u_i = 0",
                                                                   zero=("u_sink",))
    out[f"n={n}: face a_i = 0: da_i/dtau >= 0"] = decide_on_region(R, S.da[i], what="da_i >= 0 on a_i = 0",
                                                                   zero=("a_sink",))
    out[f"n={n}: du_i/dtau >= b/(n+1) on R"] = decide_on_region(R, S.du[i] - S.b / (n + 1), what="u_i rate")
    out[f"n={n}: da_i/dtau >= phi_i phi_0 u_i on R"] = decide_on_region(R, S.da[i] - S.phi[i] * S.sink * S.u[i],
                                                                       what="a_i rate")
    out[f"n={n}: winner weight (n+1) phi_i >= 1 on R"] = decide_on_region(R, (n + 1) * S.phi[i] - 1,
                                                                          what="winner weight")
    for j in range(n):
        if j == i:
            continue
        du, da = S.lie(S.u[i] - S.u[j]), S.lie(S.a[i] - S.a[j])
        tag = f"n={n}, j={j + 1}"
        out[f"{tag}: face u_i = u_j"] = decide_on_region(R, du, what="u-gap on its face", zero=(("u", j),))
        out[f"{tag}: face a_i = a_j"] = decide_on_region(R, da, what="a-gap on its face", zero=(("a", j),))
        out[f"{tag}: u-gap derivative >= 0 on R"] = decide_on_region(R, du, what="u-gap derivative")
        out[f"{tag}: a-gap derivative >= 0 on R"] = decide_on_region(R, da, what="a-gap derivative")
        out[f"{tag}: u-gap rate >= b/(n+1)(1 - e^(a_j - a_i))"] = decide_on_region(
            R, du - S.b / (n + 1) * (1 - sp.exp(S.a[j] - S.a[i])), what="u-gap rate")
        out[f"{tag}: a-gap rate >= phi_j (u_i - u_j)"] = decide_on_region(
            R, da - S.phi[j] * (S.u[i] - S.u[j]), what="a-gap rate")
        # strictness on the face u_i = u_j where a_i > a_j: du = b phi_i (1 - e^{a_j - a_i}); with
        # e^{a_j} = e^{a_i}/(1 + r_j) it is b phi_i r_j/(1 + r_j), > 0 for r_j > 0: checked as
        # du - b phi_i r_j/(1 + r_j) = 0 exactly on the face
        out[f"{tag}: face u_i = u_j: du = b phi_i (1 - e^(a_j - a_i))"] = _identity_on_face(
            R, du - S.b * S.phi[i] * (1 - sp.exp(S.a[j] - S.a[i])), ("u", j))
    return out


def _identity_on_face(R, expr, face) -> ProofResult:
    S = softmax1_system(R.n)
    u_sub, exp_sub, *_rest, faces = _region_coordinates(R, S)
    e = replace_exp(sp.sympify(expr), list(S.a), exp_sub).xreplace(u_sub).xreplace({faces[face]: 0})
    return prove_zero(e)


def region_controls(n: int, winner: int = 0) -> dict[str, SignCheck]:
    """The controls: each must be ``disproved`` (an exact point where the wrong statement fails)."""
    S = softmax1_system(n)
    i = winner
    out = {f"n={n}: region without u_i >= 0: da_i >= 0 on a_i = 0 (control)": decide_on_region(
        sink_region(n, winner, "no-u-sink"), S.da[i], what="da_i >= 0 on a_i = 0, u_i free", zero=("a_sink",)),
        f"n={n}: winner weight without a_i >= 0 (control)": decide_on_region(
        sink_region(n, winner, "no-a-sink"), (n + 1) * S.phi[i] - 1, what="winner weight, a_i free")}
    if n >= 2:
        j = 1 if winner == 0 else 0
        out[f"n={n}: a-gap rate with phi_i for phi_j (control)"] = decide_on_region(
            sink_region(n, winner), S.lie(S.a[i] - S.a[j]) - S.phi[i] * (S.u[i] - S.u[j]), what="wrong a-gap rate")
    return out
