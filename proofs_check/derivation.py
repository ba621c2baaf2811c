r"""The derivation behind ``softpolar derive`` and :func:`softpolar.derive`: :func:`build_derivation`.

For one (loss, link) and sizes ``n``, ``d``: the model, the loss gradient, the Jacobian, the flow, the
invariants that apply, the output dynamics and the reduced / clock systems, each a :class:`Section` with its
provenance tag and the identities that state it, re-proven at the requested sizes (``prove=True``). The
command (:mod:`proofs_check.cli._cmd_derive`) renders it; this module builds it and prints nothing.
"""
from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter

from theorems import IDENTITIES, SymbolicModel, check_int, generic_rows, get_link, get_loss, sigmoid, softplus
from theorems import same_loss
from theorems import is_softmax, piecewise
from theorems import __version__
from numerics.progress import report

from .claims import generic_coverage
from .report import LINE_BUDGET_PT, Derivation, Section, tex_width


# ---- building the derivation -----------------------------------------------------------------------
class _Printer(LatexPrinter):
    """LaTeX printer that also handles powers of the named functions.

    ``theorems``' ``sigmoid._latex`` does not accept the ``exp`` keyword SymPy passes
    for ``sigmoid(x)**2``; bypassing ``_latex`` (another ``printmethod``) avoids it.
    """

    printmethod = "_softpolar_latex"

    def _named(self, name, e, exp=None):
        tex = r"%s\left(%s\right)" % (name, self._print(e.args[0]))
        return tex if exp is None else r"%s^{%s}" % (tex, exp)

    def _print_sigmoid(self, e, exp=None):
        return self._named(r"\sigma_{\mathrm{sig}}", e, exp)

    def _print_softplus(self, e, exp=None):
        return self._named(r"\operatorname{softplus}", e, exp)


#: when a list, :func:`to_latex` appends ``(tex, expr)`` to it (read by the SymPy round-trip test)
LATEX_LOG: list | None = None


def to_latex(expr) -> str:
    """``expr`` in LaTeX, by the derivation's printer (logged to :data:`LATEX_LOG` when it is a list)."""
    tex = _Printer().doprint(expr)
    if LATEX_LOG is not None:
        LATEX_LOG.append((tex, expr))
    return tex


def _terms(expr) -> list[str]:
    """The printed terms of a sum, in the printer's order, each with its sign (``"+ x"``, ``"- y"``)."""
    printer = _Printer()
    out = []
    for k, term in enumerate(printer._as_ordered_terms(expr)):
        sign = "-" if term.could_extract_minus_sign() else "+"
        tex = to_latex(-term if sign == "-" else term)
        if isinstance(term if sign == "+" else -term, sp.Add):
            tex = r"\left(%s\right)" % tex
        out.append(("- " if sign == "-" else ("" if k == 0 else "+ ")) + tex)
    return out


def _gradient_statement(L) -> str:
    r"""The closed form of the chosen loss's gradient (the other losses' are not printed), by the loss's
    form, with its scalar part derived by SymPy: $\ell'$ of a margin loss, $\partial_uf$ of a separable
    one, the per-component form of a cross-entropy; a general loss is differentiated component by component."""
    t = L.target_name
    if L.form == "margin":
        z = sp.Symbol("z", real=True)
        return (rf"\nabla\mathcal L(\beta)=\ell'(\langle {t},\beta\rangle)\,{t},\quad "
                rf"\ell'(z)={to_latex(L.dell(z))}")
    if L.form == "separable":
        u, y = sp.Symbol("u", real=True), sp.Symbol(t, real=True)
        return (rf"\nabla\mathcal L(\beta)=X^\top\partial_uf(X\beta,{t}),\quad "
                rf"\partial_uf(u,{t})={to_latex(L.fu(u, y))}")
    if L.form == "cross_entropy":
        K = L.link
        b, p, P, Z = (sp.Symbol(r"\beta_{j}", real=True), sp.Symbol(f"{t}_{{j}}", real=True), sp.Symbol("P", real=True),
                      sp.Symbol("Z", positive=True))
        comp = sp.simplify(-p * K.dh(b) / K.h(b)) + P * K.dk(b) / Z
        bk = sp.Symbol(r"\beta_{k}", real=True)
        c = "" if K.c == 0 else to_latex(K.c) + "+"
        return (rf"\frac{{\partial\mathcal L}}{{\partial\beta_j}}={to_latex(comp)},\quad "
                rf"P=\textstyle\sum_k{t}_k,\ Z={c}\textstyle\sum_k{to_latex(K.k(bk))}")
    return r"\nabla\mathcal L(\beta)_k=\frac{\partial\mathcal L}{\partial\beta_k}\ \text{(differentiated by SymPy)}"


def eq_lines(lhs: str, expr, budget: float = LINE_BUDGET_PT) -> list[str]:
    r"""``lhs &= expr`` as ``align*`` lines that fit the page: a long sum continues on ``&\quad + ...``
    lines, a wide matrix is printed entry by entry (its zero entries summed up in one line)."""
    tex = to_latex(expr)
    if tex_width(lhs + "=" + tex) <= budget:
        return [f"{lhs} &= {tex}"]
    if isinstance(expr, sp.MatrixBase):
        name = lhs if "_" not in lhs else r"\left(%s\right)" % lhs
        out, zeros = [], 0
        for i in range(expr.rows):
            for j in range(expr.cols):
                if expr[i, j] == 0:
                    zeros += 1
                else:
                    out += eq_lines(f"{name}_{{{i + 1},{j + 1}}}", expr[i, j], budget)
        return out + ([rf"{name}_{{i,j}} &= 0\quad\text{{for the other }}(i,j)"] if zeros else [])
    if not isinstance(expr, sp.Add):
        return [f"{lhs} &= {tex}"]  # pragma: no cover - every long expression derive prints is a sum
    lines, head = [], tex_width(lhs + "=")
    for t in _terms(expr):
        if lines and head + tex_width(lines[-1] + t) <= budget:
            lines[-1] += " " + t
        else:
            lines.append(t)
    return [f"{lhs} &= {lines[0]}"] + [rf"&\quad {x}" for x in lines[1:]]


def _sym(name: str, **kw) -> sp.Symbol:
    return sp.Symbol(name, real=True, **kw)


def _scope(ident, loss: str, link: str) -> tuple[str, str]:
    """The (loss, link) under which ``ident`` is checked for a request of (loss, link): an identity whose
    statement does not involve the loss (``loss_free``) or the link (``link_free``) uses its own."""
    return (ident.losses[0] if ident.loss_free else loss, ident.links[0] if ident.link_free else link)


def _prove(ident, n: int, d: int, loss: str, link: str) -> tuple[str, str, str]:
    """(status, method, negative) of one identity at the requested case; '' if not applicable."""
    loss, link = _scope(ident, loss, link)
    n_eff = 2 if ident.size_free else n
    if not ident.cases(n_eff, d, loss=loss, link=link):
        return "not checked at these sizes (outside the identity's size schedule)", "", ""
    res = ident.check(n_eff, d, loss=loss, link=link)
    neg = ident.negative_control(n_eff, d, loss=loss, link=link)
    descs = "; ".join(desc for desc, _ in ident.negative)
    return res.status, res.method, f"{neg.status} ({descs})"


def _check_sizes(ident) -> str:
    """The sizes ``derive --check`` re-proves ``ident`` at, in words."""
    if ident.size_free:
        return "its one size-free case"
    ns = [n for n in range(2, 7) if ident.applies(n)]
    return f"n = {ns[0]}..{ns[-1]}" if len(ns) > 1 else f"n = {ns[0]}"


def _prove_generic(ident_id: str) -> tuple[str, str]:
    """(status of the general statement, method): "proved for all n, d", "proved for n = 2 only", "undecided: ..."."""
    rows = generic_rows([ident_id])  # memoized per process: each generic proof runs once
    if not rows:
        return "", ""
    r = rows[0]
    if r.status == "proved":
        label = "proved for all n, d" if r.scope == "all n, d" else f"proved for {r.scope}"
    else:
        label = f"{r.status}: {r.detail}"
    extra = [f"uses {', '.join(r.uses)}"] if r.uses else []
    return label, "; ".join([r.method, *extra, f"generic negative control {r.negative_status}"])


def _applies(ident, loss: str, link: str, n: int) -> bool:
    loss, link = _scope(ident, loss, link)
    return ident.applicability(loss, link)[0] and (ident.size_free or ident.applies(n))


def build_derivation(loss: str, link: str, n: int = 3, d: int = 2, *, prove: bool = True) -> Derivation:
    r"""All sections ``softpolar derive`` shows for (loss, link, n, d).

    Component forms use display symbols: $V_{k,j}$, $a_i$, $s_i$ (softmax) or $\varphi_i$
    (other links) for the weights, $g_k$ for $\nabla\mathcal L(\beta)_k$, $f_i=-\sum_kV_{k,i}g_k$.
    Raises :class:`InvalidArgument` for an unknown loss or link or bad sizes.
    """
    L, K = get_loss(loss), get_link(link)
    check_int("n", n, minimum=2)
    check_int("d", d, minimum=1)
    softmax = is_softmax(link)
    w = "s" if softmax else r"\varphi"
    V = sp.Matrix(d, n, lambda k, j: _sym(f"V_{{{k + 1},{j + 1}}}"))
    a = sp.Matrix([_sym(f"a_{{{i + 1}}}", **({"positive": True} if piecewise(link) else {}))
                   for i in range(n)])
    phi = sp.Matrix([_sym(f"{w}_{{{i + 1}}}") for i in range(n)])
    g = sp.Matrix([_sym(f"g_{{{k + 1}}}") for k in range(d)])
    f = sp.Matrix([_sym(f"f_{{{i + 1}}}") for i in range(n)])
    beta = sp.Matrix([_sym(rf"\beta_{{{k + 1}}}") for k in range(d)])
    tname = L.target_name
    target = sp.Matrix([_sym(f"{tname}_{{{k + 1}}}", **({"positive": True} if L.target_positive else {}))
                        for k in range(d)])
    Z = sp.Symbol("Z", positive=True)
    lx = to_latex
    sections: list[Section] = []
    shown: set = set()

    def add(ident_id: str, equations=(), *, statement=None, note=None, title=None):
        ident = IDENTITIES[ident_id]
        if not _applies(ident, loss, link, n):
            return
        report(None, f"proving {ident_id} ({len(sections)} sections done)")  # to a running Heartbeat, if any
        shown.add(ident_id)
        st, me, ne = _prove(ident, n, d, loss, link) if prove else ("", "", "")
        gs, gm = _prove_generic(ident_id) if prove else ("", "")
        lo, li = _scope(ident, loss, link)
        covered, why = generic_coverage(li, lo)
        if gs and not covered:
            gs, gm = f"not covered for this loss and link: {why}", ""
        sections.append(Section(ident_id, ident.title if title is None else title, ident.provenance,
                                ident.statement if statement is None else statement,
                                list(equations), ident.note if note is None else note, st, me, ne, gs, gm,
                                _check_sizes(ident)))

    # model and definitions
    model_eqs = [x for k in range(d)
                 for x in eq_lines(rf"\beta_{{{k + 1}}}", sp.Add(*[V[k, j] * phi[j] for j in range(n)]))]
    model_eqs.append(r"\mathcal L(\beta) &= " + L.latex.split("=", 1)[1])
    sections.append(Section(
        # the model's tag: the paper's form with built-in definitions; a user's link or loss adds its own tag
        # (a user model was headed [P/C], as if the paper or its code had defined it)
        "", "Model", "/".join(dict.fromkeys(["P/C", *sorted({L.provenance, K.provenance} - {"P", "C"})])),
        r"\beta=V\varphi(a),\quad V\in\mathbb R^{%d\times %d},\ a\in\mathbb R^{%d},\quad %s" % (d, n, n, K.latex),
        model_eqs,
        f"Loss {loss} [{L.provenance}], link {link} [{K.provenance}]"
        + ("; piecewise link: proofs on the smooth region $a_i>0$" if piecewise(link) else "")
        + (r"; $\varphi_i$ is the weight of token $i$" if not softmax else r"; $s_i=\operatorname{softmax}(a)_i$")))

    # gradient of the loss
    gs = L.gradient_structured(beta, target)
    add("loss.gradient", [x for k in range(d) for x in eq_lines(f"g_{{{k + 1}}}", gs[k])],
        statement=_gradient_statement(L), title=f"Closed gradient of the {loss} loss",
        note=None if L.design else "")  # the identity's note is about the square loss's design X only
    if _uses_named_functions(L, K):
        add("functions.derivatives")

    # Jacobian
    if softmax:
        add("jacobian.softmax", eq_lines("J", _softmax_jacobian_display(n, phi, Z)))
        add("shift_invariance.softmax")
        add("jacobian.properties")
    dh = sp.Matrix([K.dh(ai) for ai in a])
    if softmax:
        Jp = sp.diag(*phi) - phi * phi.T  # proven equal to the derived J by jacobian.softmax above
    else:
        dk = sp.Matrix([K.dk(ai) for ai in a]) if K.normalized else None
        Jp = (sp.diag(*dh) - phi * dk.T) / Z if K.normalized else sp.diag(*dh)
        add("jacobian.structured", eq_lines(r"J_\varphi", Jp)
            + (eq_lines("Z", K.normalizer(a)) if K.normalized else []))

    # the flow
    flow_eqs = [x for k in range(d) for j in range(n) for x in eq_lines(rf"\dot V_{{{k + 1},{j + 1}}}", -g[k] * phi[j])]
    da = Jp.T * f
    flow_eqs += [x for i in range(n) for x in eq_lines(rf"\dot a_{{{i + 1}}}", sp.collect(sp.expand(da[i]), list(f)))]
    flow_eqs += [x for i in range(n) for x in eq_lines(rf"f_{{{i + 1}}}", -sp.Add(*[V[k, i] * g[k] for k in range(d)]))]
    add("flow.structured", flow_eqs)
    if softmax:
        fbar = sp.Add(*[phi[j] * f[j] for j in range(n)])
        add("replicator", [rf"\dot a_{{{i + 1}}} &= s_{{{i + 1}}}\left(f_{{{i + 1}}} - \left({lx(fbar)}\right)\right)"
                           for i in range(n)])
        add("attention.dynamics")
        add("sum_a.conserved", [r"\frac{d}{dt}\left(" + lx(sp.Add(*a)) + r"\right) &= 0"])
        add("balance.per_token")
    add("logistic.orthogonal_fixed")
    if softmax:
        add("square.rank_one")
        add("two_token.first_integral")
        add("output.dynamics")
        add("entropy.rate")
        if same_loss(loss, "logistic"):
            u = sp.Matrix([_sym(f"u_{{{i + 1}}}") for i in range(n)])
            zb = sp.Add(*[phi[j] * u[j] for j in range(n)])
            red = [x for i in range(n)
                   for x in eq_lines(rf"u_{{{i + 1}}}", sp.Add(*[V[k, i] * target[k] for k in range(d)]))]
            red += [rf"\dot u_{{{i + 1}}} &= \gamma\,b\,s_{{{i + 1}}}" for i in range(n)]
            red += [rf"\dot a_{{{i + 1}}} &= \gamma\,s_{{{i + 1}}}\left(u_{{{i + 1}}} - \left({lx(zb)}\right)\right)"
                    for i in range(n)]
            red += eq_lines("b", sp.Add(*[t**2 for t in target]))
            red += [r"\gamma &= \frac{1}{1+e^{z}}"] + eq_lines("z", zb)
            add("reduced.logistic", red)
            add("clock.logistic")
        if same_loss(loss, "square"):
            add("clock.square_rank_one")
    sections.append(_scope_section(L.name, K.name, n, shown))
    return Derivation(L.name, K.name, n, d, sections, version=__version__)


def _uses_named_functions(L, K) -> bool:
    """Whether the definitions use softplus or sigmoid (whose derivative rules ``functions.derivatives`` checks)."""
    exprs = [K.expr_h, K.expr_k, L.expr_ell, L.expr_f] + ([L.link.expr_h] if L.link is not None else [])
    return any(e is not None and e.has(softplus, sigmoid) for e in exprs)


def _scope_section(loss: str, link: str, n: int, shown: set) -> Section:
    """Every identity not shown above, with the reason (the list check_model gives): never a silent subset."""
    groups: dict[str, list] = {}
    for ident_id, ident in IDENTITIES.items():
        if ident_id in shown:
            continue
        lo, li = _scope(ident, loss, link)
        ok, why = ident.applicability(lo, li)
        if ok and not (ident.size_free or ident.applies(n)):
            why = f"stated for n = {', '.join(map(str, ident.n_values))} only (requested n = {n})"
        elif ok and ident_id == "functions.derivatives":
            why = "the definitions use neither softplus nor sigmoid"
        elif ok:
            why = "in scope, but not part of this derivation's sections"
        groups.setdefault(why, []).append(ident_id)
    note = ("Not shown for this loss and link: " + "; ".join(
        f"{why}: {', '.join(ids)}" for why, ids in groups.items()) + ".") if groups else \
        "Every identity of the registry applies and is shown above."
    return Section("", "Scope: the identities not shown, and why", "D", "", [], note)


def _softmax_jacobian_display(n: int, s: sp.Matrix, Z: sp.Symbol) -> sp.Matrix:
    r"""The SymPy-derived softmax Jacobian rewritten in $s_i$: $e^{a_i}\to s_iZ$, $\sum_je^{a_j}\to Z$.

    Derived (component-wise ``diff`` of the definition), not typed in: the
    substitution and ``cancel`` only rename, and $Z$ cancels out.
    """
    m = SymbolicModel("logistic", "softmax", n, 1)
    J = m.jacobian.xreplace({sp.Add(*[sp.exp(x) for x in m.a]): Z})
    index = {x: i for i, x in enumerate(m.a)}

    def sub(e):
        c, x = e.args[0].as_coeff_Mul()
        if x in index and c.is_Integer:
            return (s[index[x]] * Z) ** c
        return e

    J = J.replace(lambda e: isinstance(e, sp.exp), sub).applyfunc(sp.cancel)
    if J.has(Z) or J.has(sp.exp):  # pragma: no cover - would mean the display is not the derived J
        raise AssertionError("softmax Jacobian did not reduce to a polynomial in s")
    return J.applyfunc(sp.expand)
