r"""Normalizations proposed as fixes for attention sinks, and the exact sink identity SINK1 [D].

The links (public definitions, :class:`theorems.Link`; everything below is derived for this
project [D], the sources only define the normalizations):

* **softmax1** (softmax-off-by-one, E. Miller 2023): $\varphi_i(a)=e^{a_i}/(1+\sum_je^{a_j})$;
* **stablemax** (arXiv 2501.04697): $\varphi_i(a)=s(a_i)/\sum_js(a_j)$, $s(x)=x+1$ for $x\ge0$,
  $1/(1-x)$ for $x<0$ (a ``Piecewise``: $C^1$, not smooth, so no Taylor engine);
* **ssmax** (Scalable-Softmax, arXiv 2501.19399): softmax of $\sigma\log(n)\,a$; the scale
  depends on the number of tokens, so :func:`ssmax` builds the link for one $n$;
* **softpick** (arXiv 2504.20966): $\varphi_i(a)=\max(e^{a_i}-1,0)/(\varepsilon+\sum_j|e^{a_j}-1|)$
  (not smooth: ``Max`` and ``Abs``).

All four are built-in link names (``softmax1``, ``stablemax``, ``softpick`` and ``ssmax-n<N>`` for
$N$ tokens, scale 1), accepted wherever a link name is (``Problem``, ``simulate``, ``derive``,
``verify --link``); a user link may take one of these names only with the same definition.

**SINK1** (exact, [D]). softmax1 is softmax over one extra token whose logit and value are
fixed at 0 (an explicit sink):

.. math:: \mathrm{softmax1}(a)_i=\mathrm{softmax}((0,a))_{i+1},\qquad
          [\,0\mid V\,]\,\mathrm{softmax}((0,a)) = V\,\mathrm{softmax1}(a),

so $\mathcal L$ of the $(n+1)$-token softmax model with the sink's logit and value frozen at 0
*is* the softmax1 model's $\mathcal L$ as a function of the trained parameters $(V,a)$, and the
two gradient flows coincide. :func:`sink1_proofs` proves both equalities and the equality of
the two flows (the gradients, component by component) with :func:`theorems.prove_zero` for
each size it is given; the control (:func:`sink1_control`) trains the sink's logit too: its
flow $\dot a_0=-s_0\,(V_0^\top g-\langle s,V^\top g\rangle)$ is not identically 0, so the two
flows differ, and the same prover disproves "$\dot a_0\equiv0$".
"""
from __future__ import annotations

import sympy as sp

from .errors import check_int
from ._links import SOFTMAX1, SOFTPICK, SOFTPICK_EPS, STABLEMAX, ssmax  # noqa: F401 - re-exported
from .proof import ProofResult, prove_zero

_x = sp.Symbol("x", real=True)

# SOFTMAX1, STABLEMAX, SOFTPICK and ssmax are defined with the other built-in links (theorems._links) and are
# built-in names; re-exported here, where the systems below read SOFTMAX1 at call time (the mutants patch it)
#: the normalizations beyond the paper, by name (ssmax is per n: :func:`ssmax`, built-in names ``ssmax-n<N>``)
SINK_LINKS = (SOFTMAX1, STABLEMAX, SOFTPICK)


def _square_loss(beta: sp.Matrix, y: sp.Matrix):
    return sp.Rational(1, 2) * sum((bi - yi) ** 2 for bi, yi in zip(beta, y))


def _logistic_loss(beta: sp.Matrix, w: sp.Matrix):
    return sp.log(1 + sp.exp(-sum(bi * wi for bi, wi in zip(beta, w))))


_LOSSES = {"square": _square_loss, "logistic": _logistic_loss}


def _symbols(n: int, d: int):
    a = sp.Matrix(sp.symbols(f"a1:{n + 1}", real=True))
    V = sp.Matrix(d, n, lambda i, j: sp.Symbol(f"V{i + 1}_{j + 1}", real=True))
    y = sp.Matrix(sp.symbols(f"y1:{d + 1}", real=True))
    return a, V, y


def _softmax(a: sp.Matrix) -> sp.Matrix:
    e = [sp.exp(ai) for ai in a]
    Z = sp.Add(*e)
    return sp.Matrix([ei / Z for ei in e])


def sink1_proofs(sizes=((2, 1), (3, 1), (3, 2)), losses=("square", "logistic")) -> list[tuple[str, ProofResult]]:
    """SINK1's exact parts, one :class:`ProofResult` per (statement, n, d, loss).

    For each ``(n, d)``: ``phi``: softmax1(a) - softmax((0, a))[1:] = 0; ``output``: the
    (n+1)-token output with the sink's value column 0 equals ``V softmax1(a)``; for each loss,
    ``flow``: the gradients of the two losses in (V, a) agree (so the flows coincide).
    """
    out = []
    for n, d in sizes:
        check_int("n", n, minimum=1)
        check_int("d", d, minimum=1)
        a, V, y = _symbols(n, d)
        s1 = SOFTMAX1.phi(a)
        s_full = _softmax(sp.Matrix([0, *a]))
        out.append((f"phi n={n}", prove_zero(s1 - s_full[1:, :])))
        V_full = sp.Matrix.hstack(sp.zeros(d, 1), V)
        beta_1, beta_full = V * s1, V_full * s_full
        out.append((f"output n={n} d={d}", prove_zero(beta_1 - beta_full)))
        params = [*V, *a]
        for name in losses:
            L1, Lf = _LOSSES[name](beta_1, y), _LOSSES[name](beta_full, y)
            grads = [sp.diff(L1, p) - sp.diff(Lf, p) for p in params]
            out.append((f"flow {name} n={n} d={d}", prove_zero(grads)))
    return out


def sink1_control(n: int = 2, d: int = 1, loss: str = "logistic") -> ProofResult:
    r"""The control: "the sink's logit stays put when trained" ($\dot a_0\equiv0$), decided by the same prover.

    Expected ``disproved`` (the prover finds a point where $\partial\mathcal L/\partial a_0\ne0$).
    """
    a, V, y = _symbols(n, d)
    a0 = sp.Symbol("a0", real=True)
    V_full = sp.Matrix.hstack(sp.zeros(d, 1), V)
    Lf = _LOSSES[loss](V_full * _softmax(sp.Matrix([a0, *a])), y)
    return prove_zero(sp.diff(Lf, a0).subs(a0, 0))


def sink1_witness(n: int = 2, d: int = 1, loss: str = "logistic") -> ProofResult:
    r"""An input under which the control's statement really holds: with every value column 0
    (``V = 0``) the output is 0 whatever the logits, so $\partial\mathcal L/\partial a_0\equiv0$;
    the same prover must say ``proved``."""
    a, _V, y = _symbols(n, d)
    a0 = sp.Symbol("a0", real=True)
    Lf = _LOSSES[loss](sp.zeros(d, n + 1) * _softmax(sp.Matrix([a0, *a])), y)
    return prove_zero(sp.diff(Lf, a0).subs(a0, 0))


# ---- GATE: a trainable scalar gate after attention, beta = sigma(g) V softmax(a) -----------------
def gated_model(n: int, d: int, loss: str, *, gate=None):
    r"""Symbols and the gradient flow of $\mathcal L(\sigma(g)\,V\,\mathrm{softmax}(a))$ (``gate`` replaces $\sigma$).

    Returns ``(params, rhs, extras)``: ``params`` = [V (row-major), a, g], ``rhs`` = $-\nabla\mathcal L$
    in that order (SymPy ``diff``), ``extras`` = dict of ``a``, ``V``, ``g``, ``y`` (the target),
    ``s`` and the gate value.
    """
    check_int("n", n, minimum=2)
    check_int("d", d, minimum=1)
    a, V, y = _symbols(n, d)
    g = sp.Symbol("g", real=True)
    gate_value = (1 / (1 + sp.exp(-g))) if gate is None else gate(g)
    s = _softmax(a)
    L = _LOSSES[loss](gate_value * (V * s), y)
    params = [*V, *a, g]
    rhs = [-sp.diff(L, p) for p in params]
    return params, rhs, {"a": a, "V": V, "g": g, "y": y, "s": s, "gate": gate_value}


def gate_clock_proofs(sizes=((2, 1), (3, 1), (3, 2)), *, gate=None, with_gate_factor: bool = True):
    r"""GATE's exact part for the logistic loss: the gated flow of $(u,a)$, $u=V^\top w$, is
    $\kappa\cdot(b\,s,\ J(s)u)$ with the scalar $\kappa=\sigma(g)\,\gamma$,
    $\gamma=-\ell'(\sigma(g)\langle u,s\rangle)$:
    the ungated reduced system in the clock $d\tau=\kappa\,dt$ (so the path, its vertex and its
    entropy as a function of $\tau$ are those of the ungated flow).

    ``with_gate_factor=False`` states the control, $\kappa=\gamma$ (the gate has no effect at all);
    ``gate`` plants a different gate function (the witness plants $\sigma\equiv1$).
    """
    out = []
    for n, d in sizes:
        params, rhs, ex = gated_model(n, d, "logistic", gate=gate)
        V, w, s, gv = ex["V"], ex["y"], ex["s"], ex["gate"]
        dV = sp.Matrix(d, n, rhs[: d * n])
        da = sp.Matrix(rhs[d * n: d * n + n])
        u = V.T * w
        b = (w.T * w)[0, 0]
        z = gv * (u.T * s)[0, 0]
        gamma = 1 / (1 + sp.exp(z))  # -l'(z) for l(z) = log(1 + e^{-z})
        kappa = (gv if with_gate_factor else 1) * gamma
        J = sp.diag(*s) - s * s.T
        du = dV.T * w
        out.append((f"u n={n} d={d}", prove_zero(du - kappa * b * s)))
        out.append((f"a n={n} d={d}", prove_zero(da - kappa * J * u)))
    return out


# ---- SINK2: the reduced logistic system of softmax1 in the log clock -----------------------------
def softmax1_log_clock(n: int):
    r"""The reduced logistic system of softmax1 in the clock $\sigma=\log\tau$ [D], as SymPy expressions.

    With $u=V^\top w$, $b=\|w\|^2$ and the logistic clock $d\tau=\gamma\,dt$, $\gamma=1/(1+e^z)$,
    $z=\langle u,\varphi(a)\rangle$ (valid for every link), and $\sigma=\log\tau$:

    .. math:: \frac{du}{d\sigma}=\tau\,b\,\varphi(a),\qquad \frac{da}{d\sigma}=\tau\,J_\varphi(a)^\top u,

    with $\varphi$, $J_\varphi$ of :data:`SOFTMAX1` (derived from its definition). The physical time
    is $t=\int(1+e^{z})\,d\tau$: during the sink phase $z\approx0$, so $t\approx2\tau$; after the
    escape $z$ grows like $b\tau$ and $t$ like $e^{b\tau}$, which is why the system is integrated in
    $\tau$. The sink's mass is $1-\sum_i\varphi_i(a)=1/(1+\sum_je^{a_j})$. Returns
    ``(args, rhs, sink_mass)`` with ``args`` = ``[sigma, u_1..u_n, a_1..a_n, b]``.
    """
    check_int("n", n, minimum=1)
    sig, b = sp.symbols("sigma b", real=True)
    u = sp.Matrix(sp.symbols(f"u1:{n + 1}", real=True))
    a = sp.Matrix(sp.symbols(f"a1:{n + 1}", real=True))
    phi = SOFTMAX1.phi(a)
    J = SOFTMAX1.jacobian_structured(a)
    tau = sp.exp(sig)
    rhs = [*(tau * b * phi), *(tau * J.T * u)]
    return [sig, *u, *a, b], rhs, 1 - sum(phi)


def softmax1_tau_system(n: int):
    r"""The same system in $\tau$ itself (for the start, $\tau\in[0,1]$): ``(args, rhs)``, ``args`` =
    ``[tau, u, a, b]``."""
    tau, b = sp.symbols("tau b", real=True)
    u = sp.Matrix(sp.symbols(f"u1:{n + 1}", real=True))
    a = sp.Matrix(sp.symbols(f"a1:{n + 1}", real=True))
    phi = SOFTMAX1.phi(a)
    J = SOFTMAX1.jacobian_structured(a)
    return [tau, *u, *a, b], [*(b * phi), *(J.T * u)]


def escape_law(u1, b):
    r"""Our derived law for the escape time of the metastable sink [D]: $\log\tau^*\approx u_1(0)^2/(2b)$.

    Sketch: in the sink phase $s_0\approx1$, so $d(e^{-a_1})/d\tau\approx|u_1|$ and
    $s_1\approx1/U$ with $U=\int|u_1|\,d\tau$; then $d|u_1|/d\tau=-b/U$, $U''=-b/U$, and
    $u_1^2=u_1(0)^2-2b\log(U/U_0)$: $u_1$ reaches 0 when $\log U=u_1(0)^2/(2b)+O(1)$.
    """
    return u1 * u1 / (2 * b)
