r"""Symmetries of the logistic tau-system, and what one 2-D atlas slice covers [D].

The system ($\star$) of :mod:`theorems.trapping` (paper-notes#logistic, [D]):

.. math:: \frac{du}{d\tau}=b\,s,\qquad \frac{da}{d\tau}=J(s)\,u,\qquad s=\operatorname{softmax}(a).

Three symmetries, each proven exactly by :func:`prove_symmetries` (with SymPy's
exact-zero machinery, :func:`theorems.prove_zero`) for a given $n$:

1. **u-shift.** $u\mapsto u+c\mathbf 1$ leaves the right-hand side unchanged:
   $\frac{du}{d\tau}$ does not involve $u$, and $J(s)\mathbf 1=s-s\,(s^\top\mathbf 1)=0$.
   So if $(u,a)$ solves ($\star$), so does $(u+c\mathbf 1,a)$.
2. **a-shift.** $a\mapsto a+c\mathbf 1$ leaves $s$, hence the right-hand side,
   unchanged (softmax is shift invariant): $(u,a+c\mathbf 1)$ is a solution too.
3. **b scales out.** With $u=\sqrt b\,\tilde u$ and $\tilde\tau=\sqrt b\,\tau$,

   .. math:: \frac{d\tilde u}{d\tilde\tau}=s,\qquad \frac{da}{d\tilde\tau}=J(s)\,\tilde u,

   i.e. ($\star$) with $b=1$. Proven as the two identities
   $\frac{1}{b}\,(b\,s)-s=0$ and $\frac{1}{\sqrt b}J(s)(\sqrt b\,\tilde u)-J(s)\tilde u=0$
   after the substitution.

Negative controls (same checker, must be *disproved*): shifting only one
coordinate ($u\mapsto u+c\,e_1$, $a\mapsto a+c\,e_1$), and the wrong scaling
$u=b\,\tilde u$ with $\tilde\tau=\sqrt b\,\tau$.

What an atlas slice covers
==========================
The winner $\lim_{\tau\to\infty}s(\tau)=e_i$ is a property of the orbit; a
positive constant time change ($\tilde\tau=\sqrt b\,\tau$) and the two shifts map
orbits to orbits with the same $s(\tau)$. Moreover, by the trapping lemma, $R_i^+$
is defined by differences $u_i-u_j$, $a_i-a_j$ only, so it is invariant under
both shifts, and under $u\mapsto\sqrt b\,u$. Hence a certificate "every
$(u(0),a(0))$ in the box $Q$, with $b=1$, polarizes to token $i$" proves the same
for every initialization

.. math:: (\sqrt b\,\tilde u+c\mathbf 1,\ a+c'\mathbf 1,\ b),\qquad (\tilde u,a)\in Q,\ b>0,\ c,c'\in\mathbb R,

and, by item 3 of the trapping lemma, in the original time $t$ of the logistic
flow. In the state space $\mathbb R^{2n}\times(0,\infty)$ (of dimension $2n+1$),
the orbit-relevant coordinates are the $2(n-1)$ differences of $\tilde u$ and of
$a$: for $n=3$ a 2-D slice is a 2-D subset of a 4-D reduced space, i.e. it covers a
5-D family of $(u,a,b)$. Atlas slices are therefore stated at $b=1$ without loss
of generality; :func:`slice_coverage` writes this statement for a given $n$.

The atlas engine (:mod:`numerics.validated.box`) integrates exactly these reduced
coordinates (differences to the last token, $b$ kept as a parameter); the
shift identities above are what make that legitimate.

Provenance: derived for this project [D]; the paper's theorem assumes a uniform
$a(0)$ (paper-notes#logistic, [A]) and does not discuss these symmetries [M].
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .errors import check_int
from .proof import ProofResult, prove_zero
from .trapping import tau_system


@dataclass(frozen=True)
class SymmetryReport:
    """Every symmetry check for one ``n``: ``holds`` iff each has its expected status."""

    n: int
    checks: tuple  # of (name, ProofResult, expected status)

    @property
    def holds(self) -> bool:
        return all(res.status == expected for _, res, expected in self.checks)

    def summary(self) -> list[dict]:
        return [{"name": name, "status": res.status, "expected": expected}
                for name, res, expected in self.checks]


def _rhs(ts):
    return list(ts.du) + list(ts.da)


def check_u_shift(n: int, *, wrong: bool = False) -> ProofResult:
    r"""Prove $f(u+c\mathbf 1,a)=f(u,a)$ for ($\star$); ``wrong=True`` shifts $u_1$ only (control)."""
    check_int("n", n, minimum=2)
    ts = tau_system(n)
    c = sp.Symbol("c", real=True)
    shift = {uk: uk + (c if (not wrong or k == 0) else 0) for k, uk in enumerate(ts.u)}
    return prove_zero([g.xreplace(shift) - f for f, g in zip(_rhs(ts), _rhs(ts))])


def check_a_shift(n: int, *, wrong: bool = False) -> ProofResult:
    r"""Prove $f(u,a+c\mathbf 1)=f(u,a)$; ``wrong=True`` shifts $a_1$ only (control)."""
    check_int("n", n, minimum=2)
    ts = tau_system(n)
    c = sp.Symbol("c", real=True)
    shift = {ak: ak + (c if (not wrong or k == 0) else 0) for k, ak in enumerate(ts.a)}
    return prove_zero([sp.expand(g.xreplace(shift)) - f for f, g in zip(_rhs(ts), _rhs(ts))])


def check_b_scaling(n: int, *, wrong: bool = False) -> ProofResult:
    r"""Prove that $u=\sqrt b\,\tilde u$, $\tilde\tau=\sqrt b\,\tau$ turns ($\star$) into its $b=1$ form.

    $\frac{d\tilde u}{d\tilde\tau}=\frac{1}{\sqrt b}\frac{du}{d\tau}\frac{d\tau}{d\tilde\tau}
    =\frac1b\frac{du}{d\tau}$ must equal $s$, and $\frac{da}{d\tilde\tau}=\frac{1}{\sqrt b}\frac{da}{d\tau}$
    must equal $J(s)\tilde u$. ``wrong=True``: $u=b\,\tilde u$ (control).
    """
    check_int("n", n, minimum=2)
    ts = tau_system(n)
    ut = [sp.Symbol(f"ut_{k + 1}", real=True) for k in range(n)]
    scale = ts.b if wrong else sp.sqrt(ts.b)
    sub = {uk: scale * utk for uk, utk in zip(ts.u, ut)}
    du_t = [(duk.xreplace(sub) / scale) / sp.sqrt(ts.b) for duk in ts.du]
    da_t = [dak.xreplace(sub) / sp.sqrt(ts.b) for dak in ts.da]
    unit = {ts.b: sp.Integer(1), **{uk: utk for uk, utk in zip(ts.u, ut)}}
    target = [f.xreplace(unit) for f in _rhs(ts)]
    return prove_zero([x - y for x, y in zip(du_t + da_t, target)])


def prove_symmetries(n: int = 3) -> SymmetryReport:
    """The three symmetries (expected ``proved``) and their three controls (expected ``disproved``)."""
    return SymmetryReport(n, (
        ("u -> u + c 1", check_u_shift(n), "proved"),
        ("a -> a + c 1", check_a_shift(n), "proved"),
        ("u = sqrt(b) ut, tau' = sqrt(b) tau gives b = 1", check_b_scaling(n), "proved"),
        ("u -> u + c e_1 (control)", check_u_shift(n, wrong=True), "disproved"),
        ("a -> a + c e_1 (control)", check_a_shift(n, wrong=True), "disproved"),
        ("u = b ut (control)", check_b_scaling(n, wrong=True), "disproved"),
    ))


def slice_coverage(n: int) -> str:
    """In words: the set of initializations a certified box of a ``b = 1`` atlas slice stands for."""
    check_int("n", n, minimum=2)
    return (f"n = {n}: a certified box Q (at b = 1) proves polarization to its winner for every "
            f"(sqrt(b) u + c 1, a + c' 1, b) with (u, a) in Q, b > 0, c, c' real: orbits depend only "
            f"on the {2 * (n - 1)} differences u_k - u_n, a_k - a_n of (u / sqrt(b), a), so a 2-D slice "
            f"covers a {2 + 3}-parameter family of the {2 * n + 1}-dimensional (u, a, b) space [D]")
