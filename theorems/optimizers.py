r"""Optimizers: how the parameters move given the gradient, one public definition (like :class:`theorems.Link`).

An :class:`Optimizer` states the update of every parameter coordinate $\theta$ of $(V, a)$ from its gradient
coordinate $g=\partial F/\partial\theta$ in two forms, both SymPy expressions, never a name:

* a **continuous form** (``flow``): $\dot\theta$ and the time derivative of each optimizer state (moments of Adam),
  in the public symbols :data:`g`, :data:`theta`, :data:`G2`, :data:`t`, :data:`lr`, the state symbols and the
  hyperparameters;
* a **discrete form** (``step``): assignments executed in order (a later one sees the new values), the last
  assigning :data:`theta`, in :data:`g`, :data:`theta`, :data:`G2`, :data:`k` (the step, from 1), :data:`lr`, the
  states and the hyperparameters.

$G_2$ is the squared Euclidean norm of the gradient over the rule's *norm scope*: ``"all"`` (every coordinate of
$(V, a)$) or ``"block"`` ($V$ alone, $a$ alone). A definition may give one rule for both blocks or one per block
(:meth:`Optimizer.blockwise`). Hyperparameters are symbols with default values; engines take their values at
run time (``--opt beta1=0.8``), so a name always means one set of expressions.

Built-ins (:data:`BUILTIN_OPTIMIZERS`): ``gd`` (gradient flow / GD), ``ngd`` (normalized), ``sign`` (sign flow /
signGD, discontinuous), ``adam`` and ``rmsprop`` (the ODE models below and the discrete steps of ``torch.optim``),
``muon`` (the polar factor of the $V$-gradient, in its proven rank-one closed form; GD on $a$).

The Adam ODE [D] (the exact interpolation of the moment recursions: with $r_1=-\log\beta_1/\eta$,
$e^{-r_1t}=\beta_1^k$ at $t=k\eta$, so the bias corrections agree with the discrete ones at every step):

.. math:: \dot m=r_1(g-m),\quad \dot v=r_2(g^2-v),\quad
          \dot\theta=-\frac{m/(1-e^{-r_1t})}{\sqrt{v/(1-e^{-r_2t})}+\varepsilon},\qquad m(0)=v(0)=0 .

At $t=0$ the right-hand side is $0/0$; :meth:`Optimizer.flow_at_start` derives its limit by SymPy
($\dot\theta(0)=-g/(|g|+\varepsilon)$). The RMSProp ODE is the same with $\beta_1=0$ (bias-corrected; torch's
RMSProp has no bias correction, so its first steps, about $1/(1-\alpha)$ of them, differ from the ODE's).

Proven facts (:func:`time_change`, :func:`muon_closed_form`, :func:`sum_of_logits`), each with a negative control:
normalized flow is gradient flow on the clock $ds=\lVert\nabla F\rVert\,dt$ (arc length); the polar factor of the
rank-one $V$-gradient $g\varphi^\top$ is $g\varphi^\top/(\lVert g\rVert\lVert\varphi\rVert)$; which optimizers keep
$\sum_ia_i$ (claim C04 of gradient flow).

Limits: Muon without momentum only (a momentum buffer is a sum of rank-one matrices, not rank one); weight decay,
AMSGrad and Nesterov are not built in (a user definition can add them).
"""
from __future__ import annotations

import contextlib
import contextvars
from functools import cached_property

import sympy as sp

from .errors import InvalidArgument, check_int, show
from ._links import NONSMOOTH_TYPES, check_name, exact_constant
from .proof import ProofResult, prove_zero

#: the gradient coordinate $g=\partial F/\partial\theta$
g = sp.Symbol("g", real=True)
#: the parameter coordinate
theta = sp.Symbol("theta", real=True)
#: the squared norm of the gradient over the rule's norm scope (positive away from critical points)
G2 = sp.Symbol("G2", positive=True)
#: continuous time
t = sp.Symbol("t", nonnegative=True)
#: the step number of the discrete form (1 for the first update)
k = sp.Symbol("k", positive=True, integer=True)
#: the learning rate (the discrete step; the continuous form may use it for its time scales)
lr = sp.Symbol("lr", positive=True)

NORM_SCOPES = ("all", "block")
BLOCKS = ("V", "a")
_FLOW_ALLOWED = {g, theta, G2, t, lr}
_STEP_ALLOWED = {g, theta, G2, k, lr}


def _expr(where: str, value) -> sp.Expr:
    if isinstance(value, str):
        raise InvalidArgument(f"{where}: got the string {show(value)}; expected a SymPy expression")
    try:
        e = sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError) as exc:
        raise InvalidArgument(f"{where}: got {show(value)}; expected a SymPy expression") from exc
    if not isinstance(e, sp.Expr) or getattr(e, "is_Matrix", False):
        raise InvalidArgument(f"{where}: got {show(value)}; expected a scalar SymPy expression")
    return e


class Rule:
    r"""The update of one block: ``flow`` $\{\theta:\dot\theta,\ s:\dot s\}$, ``step`` ``[(symbol, expr), ...]``,
    ``state`` $\{s: s(0)\}$, ``norm`` the scope of :data:`G2`. Validated at construction: every state has a flow
    and at most one assignment, the step assigns :data:`theta` last, no unknown free symbols."""

    def __init__(self, *, flow, step, state=None, hyper=(), norm: str = "all", where: str = "optimizer"):
        if norm not in NORM_SCOPES:
            raise InvalidArgument(f"{where}: norm={show(norm)}; expected one of {NORM_SCOPES}")
        state = dict(state or {})
        for s in state:
            if not isinstance(s, sp.Symbol) or s in _FLOW_ALLOWED | _STEP_ALLOWED:
                raise InvalidArgument(f"{where}: state {show(s)}; expected a SymPy Symbol other than g, theta, G2, "
                                      "t, k, lr")
        self.state = {s: exact_constant(f"{where}: initial {s}", v) for s, v in state.items()}
        hyper = set(hyper)
        if not isinstance(flow, dict) or set(flow) != {theta, *state}:
            got = sorted(map(str, flow)) if isinstance(flow, dict) else show(flow)
            raise InvalidArgument(f"{where}: flow has keys {got}; expected theta and each state "
                                  f"({sorted(map(str, [theta, *state]))})")
        self.flow = {s: _expr(f"{where}: flow[{s}]", e) for s, e in flow.items()}
        for s, e in self.flow.items():
            extra = e.free_symbols - _FLOW_ALLOWED - set(state) - hyper
            if extra:
                raise InvalidArgument(f"{where}: flow[{s}] = {show(e)} has unknown symbols {sorted(map(str, extra))}; "
                                      "expected g, theta, G2, t, lr, the states and the hyperparameters")
        try:
            pairs = [(s, e) for s, e in step]
        except (TypeError, ValueError) as exc:
            raise InvalidArgument(f"{where}: step={show(step)}; expected a list of (symbol, expression)") from exc
        step = [(s, _expr(f"{where}: step[{s}]", e)) for s, e in pairs]
        targets = [s for s, _ in step]
        if not targets or targets[-1] != theta or targets.count(theta) != 1 \
                or any(s not in state and s != theta for s in targets) or len(set(targets)) != len(targets):
            raise InvalidArgument(f"{where}: step assigns {[str(s) for s in targets]}; expected each state at most "
                                  "once and theta last")
        for s, e in step:
            extra = e.free_symbols - _STEP_ALLOWED - set(state) - hyper
            if extra:
                raise InvalidArgument(f"{where}: step[{s}] = {show(e)} has unknown symbols {sorted(map(str, extra))}; "
                                      "expected g, theta, G2, k, lr, the states and the hyperparameters")
        self.step = tuple(step)
        self.norm = norm

    def key(self) -> tuple:
        return (tuple((str(s), sp.srepr(e)) for s, e in sorted(self.flow.items(), key=lambda kv: str(kv[0]))),
                tuple((str(s), sp.srepr(e)) for s, e in self.step),
                tuple((str(s), sp.srepr(v)) for s, v in self.state.items()), self.norm)

    def exprs(self) -> list:
        return list(self.flow.values()) + [e for _, e in self.step]


class Optimizer:
    r"""An optimizer (see the module docstring): ``Optimizer(name, flow=..., step=..., state=..., hyper=...,
    norm="all")`` gives one rule for both blocks; :meth:`blockwise` one rule per block.

    Args:
        name: the label used by the CLI and in reports.
        flow: ``{theta: expr, state: expr, ...}``, the continuous form.
        step: ``[(state, expr), ..., (theta, expr)]``, the discrete form (in order).
        state: ``{symbol: initial value}`` (default none).
        hyper: ``{symbol: default value}``, exact (a float at its exact binary value).
        norm: ``"all"`` or ``"block"``: the coordinates :data:`G2` sums over.
        latex, provenance: for reports (``U`` for a user definition).

    Derived: ``smooth`` (no ``sign``/``Abs``/``Piecewise``... in the flow), :meth:`switching_functions`,
    :meth:`gf_multiplier` (the flow is a positive multiple of gradient flow), :meth:`flow_at_start`.
    """

    def __init__(self, name: str, *, flow=None, step=None, state=None, hyper=None, norm: str = "all",
                 latex: str | None = None, provenance: str = "U", _rules=None):
        check_name("optimizer", name)
        hyper = dict(hyper or {})
        for s in hyper:
            if not isinstance(s, sp.Symbol):
                raise InvalidArgument(f"optimizer {name!r}: hyperparameter {show(s)}; expected a SymPy Symbol")
        self.hyper = {s: exact_constant(f"optimizer {name!r}: {s}", v) for s, v in hyper.items()}
        if _rules is None:
            rule = Rule(flow=flow, step=step, state=state, hyper=self.hyper, norm=norm,
                        where=f"optimizer {name!r}")
            _rules = {"V": rule, "a": rule}
        self.rules = dict(_rules)
        self.name = name
        self.provenance = provenance
        self.latex = latex or self._default_latex()

    @classmethod
    def blockwise(cls, name: str, *, V: Rule, a: Rule, hyper=None, latex=None, provenance="U"):
        """One :class:`Rule` for the $V$ block and one for the $a$ block."""
        for b, r in (("V", V), ("a", a)):
            if not isinstance(r, Rule):
                raise InvalidArgument(f"optimizer {name!r}: {b}={show(r)}; expected a theorems.optimizers.Rule")
        return cls(name, hyper=hyper, latex=latex, provenance=provenance, _rules={"V": V, "a": a})

    # ---- identity ---------------------------------------------------------------------------------------------
    @cached_property
    def key(self) -> tuple:
        """The definition (no name, no latex, no default values): equal keys compute the same thing."""
        return ("optimizer", self.rules["V"].key(), self.rules["a"].key(), tuple(sorted(map(str, self.hyper))))

    def same_definition(self, other) -> bool:
        return isinstance(other, Optimizer) and self.key == other.key

    def __eq__(self, other):
        return isinstance(other, Optimizer) and (self.name, self.key) == (other.name, other.key)

    def __hash__(self):
        return hash((self.name, self.key))

    def __repr__(self):
        return f"Optimizer({self.name!r})"

    def _default_latex(self) -> str:
        parts = []
        for b in BLOCKS if self.rules["V"] is not self.rules["a"] else ("",):
            r = self.rules[b or "V"]
            lhs = rf"\dot\theta_{{{b}}}" if b else r"\dot\theta"
            parts.append(f"{lhs}={sp.latex(r.flow[theta])}")
        return ",\\ ".join(parts)

    # ---- derived ----------------------------------------------------------------------------------------------
    def states(self, block: str) -> tuple:
        return tuple(self.rules[block].state)

    @cached_property
    def smooth(self) -> bool:
        """No non-smooth node (``sign``, ``Abs``, ``Piecewise``, ...) in either block's flow."""
        return not any(e.has(*NONSMOOTH_TYPES) for r in self.rules.values() for e in r.flow.values())

    def switching_functions(self, block: str) -> list:
        r"""The arguments of the non-smooth nodes of a block's flow: the flow is smooth where none vanishes.

        Raises ``InvalidArgument`` when a switching function is not a function of :data:`g` alone vanishing only
        at $g=0$ (the surfaces $g_i=0$ are what the Filippov engine handles; anything else is refused).
        """
        out = []
        for e in self.rules[block].flow.values():
            for node in sp.preorder_traversal(e):
                if isinstance(node, NONSMOOTH_TYPES):
                    arg = node.args[0] if node.args else None
                    if not isinstance(node, (sp.sign, sp.Abs)) or arg is None or arg.free_symbols != {g} \
                            or sp.solveset(arg, g, sp.S.Reals) != sp.FiniteSet(0):
                        raise InvalidArgument(
                            f"optimizer {self.name!r}: the non-smooth node {node} of its {block}-flow switches on a "
                            "surface other than g_i = 0; expected sign(.) or Abs(.) of an expression in g vanishing "
                            "only at g = 0 (a discontinuous flow is integrated only across the surfaces g_i = 0)")
                    out.append(arg)
        return out

    def gf_multiplier(self, block: str):
        r"""$\lambda$ with $\dot\theta=-\lambda g$, when it depends on neither $g$ nor $\theta$ nor a state (a positive
        multiple of gradient flow, proven by :func:`time_change`), else ``None``."""
        r = self.rules[block]
        if r.state:
            return None
        lam = sp.simplify(r.flow[theta] / (-g))
        if lam.free_symbols & {g, theta}:
            return None
        return lam

    def flow_at_start(self, block: str) -> dict:
        r"""The flow at $t=0$ with the states at their initial values, as a limit $t\to0^+$ where the flow is
        $0/0$ there (Adam's bias correction): each state replaced by its first-order Taylor polynomial
        $s(0)+t\,\dot s(0)$ and ``sympy.limit`` taken. Raises ``InvalidArgument`` if a limit is not finite."""
        r = self.rules[block]
        at0 = {s: v for s, v in r.state.items()}
        ds0 = {s: r.flow[s].subs({**at0, t: 0}) for s in r.state}
        taylor = {s: r.state[s] + t * ds0[s] for s in r.state}
        out = {}
        for s, e in r.flow.items():
            # 0/0 shows up once t = 0 alone is substituted (the states still symbols): substituting the states
            # first could cancel it silently (Adam: m = 0 makes the numerator 0 and the quotient "0")
            singular = e.subs(t, 0).has(sp.nan, sp.zoo, sp.oo, -sp.oo)
            direct = None if singular else e.subs({**at0, t: 0})
            if direct is None or direct.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                direct = sp.limit(e.subs(taylor), t, 0, "+")
                if direct.has(sp.nan, sp.zoo, sp.oo, -sp.oo, sp.Limit):
                    raise InvalidArgument(f"optimizer {self.name!r}: flow[{s}] has no finite limit at t = 0")
            out[s] = sp.simplify(direct) if singular else direct
        return out


def _sym(name):
    return sp.Symbol(name, positive=True)


beta1, beta2, eps, alpha = _sym("beta1"), _sym("beta2"), _sym("eps"), _sym("alpha")
m, v = sp.Symbol("m", real=True), sp.Symbol("v", nonnegative=True)

GD = Optimizer("gd", flow={theta: -g}, step=[(theta, theta - lr * g)], provenance="P",
               latex=r"\dot\theta=-g;\quad\theta\leftarrow\theta-\eta g")
NGD = Optimizer("ngd", flow={theta: -g / sp.sqrt(G2)}, step=[(theta, theta - lr * g / sp.sqrt(G2))], provenance="D",
                latex=r"\dot\theta=-g/\lVert\nabla F\rVert;\quad\theta\leftarrow\theta-\eta g/\lVert\nabla F\rVert")
SIGN = Optimizer("sign", flow={theta: -sp.sign(g)}, step=[(theta, theta - lr * sp.sign(g))], provenance="D",
                 latex=r"\dot\theta=-\operatorname{sign}g;\quad\theta\leftarrow\theta-\eta\operatorname{sign}g")
_r1, _r2 = -sp.log(beta1) / lr, -sp.log(beta2) / lr
ADAM = Optimizer(
    "adam", state={m: 0, v: 0}, hyper={beta1: 0.9, beta2: 0.999, eps: 1e-8}, provenance="D",
    flow={m: _r1 * (g - m), v: _r2 * (g**2 - v),
          theta: -(m / (1 - sp.exp(-_r1 * t))) / (sp.sqrt(v / (1 - sp.exp(-_r2 * t))) + eps)},
    # torch.optim.Adam (foreach=False): exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad,
    # value=1 - beta2); denom = exp_avg_sq.sqrt() / sqrt(1 - beta2**k) + eps; param -= lr / (1 - beta1**k) * m / denom
    step=[(m, m + (1 - beta1) * (g - m)), (v, beta2 * v + (1 - beta2) * g * g),
          (theta, theta - lr / (1 - beta1**k) * (m / (sp.sqrt(v) / sp.sqrt(1 - beta2**k) + eps)))],
    latex=r"\dot m=r_1(g-m),\ \dot v=r_2(g^2-v),\ \dot\theta=-\frac{m/(1-e^{-r_1t})}{\sqrt{v/(1-e^{-r_2t})}+"
          r"\varepsilon},\ r_i=-\log\beta_i/\eta")
RMSPROP = Optimizer(
    "rmsprop", state={v: 0}, hyper={alpha: 0.99, eps: 1e-8}, provenance="D",
    flow={v: -sp.log(alpha) / lr * (g**2 - v),
          theta: -g / (sp.sqrt(v / (1 - sp.exp(sp.log(alpha) / lr * t))) + eps)},
    # torch.optim.RMSprop: square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha); param -= lr * g / (sqrt + eps)
    step=[(v, alpha * v + (1 - alpha) * g * g), (theta, theta - lr * (g / (sp.sqrt(v) + eps)))],
    latex=r"\dot v=r(g^2-v),\ \dot\theta=-\frac{g}{\sqrt{v/(1-e^{-rt})}+\varepsilon},\ r=-\log\alpha/\eta")
MUON = Optimizer.blockwise(
    "muon", provenance="D",
    # the polar factor of the rank-one V-gradient g phi^T is G/||G||_F (muon_closed_form); a: plain gradient
    V=Rule(flow={theta: -g / sp.sqrt(G2)}, step=[(theta, theta - lr * g / sp.sqrt(G2))], norm="block",
           where="optimizer 'muon' (V)"),
    a=Rule(flow={theta: -g}, step=[(theta, theta - lr * g)], where="optimizer 'muon' (a)"),
    latex=r"\dot V=-\operatorname{polar}(\nabla_VF)=-\frac{\nabla_VF}{\lVert\nabla_VF\rVert_F},\ \dot a=-\nabla_aF")

#: the built-in optimizers (a user optimizer may not take these names)
BUILTIN_OPTIMIZERS: tuple[Optimizer, ...] = (GD, NGD, SIGN, ADAM, RMSPROP, MUON)


class OptimizerRegistry:
    """User optimizers by name, over an optional ``parent`` registry whose names a scope also sees (and may not
    redefine). Built-ins are in no registry: every scope sees them, and no user optimizer may take their names."""

    def __init__(self, parent: "OptimizerRegistry | None" = None):
        if parent is not None and not isinstance(parent, OptimizerRegistry):
            raise InvalidArgument(f"parent={show(parent)}; expected a theorems.optimizers.OptimizerRegistry or None")
        self.parent = parent
        self._own: dict = {}

    def get(self, name: str):
        """The user optimizer called ``name`` here or in a parent, else ``None``."""
        reg = self
        while reg is not None:
            if name in reg._own:
                return reg._own[name]
            reg = reg.parent
        return None

    def user(self) -> dict:
        """Every user optimizer this registry sees, by name (a parent's first)."""
        return {**(self.parent.user() if self.parent is not None else {}), **self._own}

    def register(self, opt: Optimizer) -> Optimizer:
        """Make ``opt`` available by name here (a built-in name or a second definition under one name: refused)."""
        if not isinstance(opt, Optimizer):
            raise InvalidArgument(f"register_optimizer: got {show(opt)}; expected a theorems.optimizers.Optimizer")
        b = {o.name: o for o in BUILTIN_OPTIMIZERS}.get(opt.name)
        if b is not None:
            if b is opt or b.same_definition(opt):
                return b
            raise InvalidArgument(f"optimizer {opt.name!r}: a user optimizer may not shadow the built-in of that name")
        old = self.get(opt.name)
        if old is not None and old != opt:
            raise InvalidArgument(f"optimizer {opt.name!r}: already registered with another definition")
        self._own[opt.name] = opt
        return opt


#: the registry of the process (what ``register_optimizer`` writes outside any :func:`optimizer_scope`)
GLOBAL_REGISTRY = OptimizerRegistry()
_CURRENT: contextvars.ContextVar = contextvars.ContextVar("softpolar_optimizer_registry", default=GLOBAL_REGISTRY)


def current_registry() -> OptimizerRegistry:
    """The registry in effect: the innermost :func:`optimizer_scope`'s, else :data:`GLOBAL_REGISTRY`."""
    return _CURRENT.get()


@contextlib.contextmanager
def optimizer_scope(registry: OptimizerRegistry | None = None):
    """A scope for user optimizers: registrations inside it go to ``registry`` (default: a new one over the
    current registry) and are gone once it exits. ``softpolar``'s CLI runs each command in one, so a ``--models``
    optimizer of one in-process run does not leak into the next. A ``contextvars`` variable: threads and asyncio
    tasks started outside do not see it; processes forked inside it do."""
    reg = OptimizerRegistry(parent=current_registry()) if registry is None else registry
    if not isinstance(reg, OptimizerRegistry):
        raise InvalidArgument(f"registry={show(reg)}; expected a theorems.optimizers.OptimizerRegistry or None")
    token = _CURRENT.set(reg)
    try:
        yield reg
    finally:
        _CURRENT.reset(token)


def _registry(registry) -> OptimizerRegistry:
    if registry is None:
        return current_registry()
    if not isinstance(registry, OptimizerRegistry):
        raise InvalidArgument(f"registry={show(registry)}; expected a theorems.optimizers.OptimizerRegistry or None")
    return registry


def register_optimizer(opt: Optimizer, registry: OptimizerRegistry | None = None) -> Optimizer:
    """Make a user optimizer available by name in ``registry`` (default: the current one, :func:`optimizer_scope`);
    a built-in name or a second definition under one name: refused."""
    return _registry(registry).register(opt)


def all_optimizers(registry: OptimizerRegistry | None = None) -> dict:
    """Every optimizer known now (in ``registry``, default the current one): built-ins first, then user
    optimizers by name."""
    return {**{o.name: o for o in BUILTIN_OPTIMIZERS}, **dict(sorted(_registry(registry).user().items()))}


def get_optimizer(x, registry: OptimizerRegistry | None = None) -> Optimizer:
    """The optimizer called ``x`` (or ``x`` itself, registered on the way) in ``registry`` (default: current)."""
    if isinstance(x, Optimizer):
        return register_optimizer(x, registry)
    known = all_optimizers(registry)
    if isinstance(x, str) and x in known:
        return known[x]
    raise InvalidArgument(f"optimizer={show(x)} is not allowed; expected one of {', '.join(map(repr, known))} (a user "
                          "optimizer: define it with theorems.optimizers.Optimizer in a --models file)")


def hyper_values(opt: Optimizer, overrides=None) -> dict:
    """``{symbol: exact value}``: the defaults with ``overrides`` (``{name: value}``) applied; an unknown name or a
    non-positive value is refused (every built-in hyperparameter is a positive number)."""
    out = dict(opt.hyper)
    by_name = {str(s): s for s in out}
    for name, val in (overrides or {}).items():
        if name not in by_name:
            raise InvalidArgument(f"--opt {name}={val}: optimizer {opt.name!r} has no parameter {name!r}; expected "
                                  f"one of {sorted(by_name) or '(none)'}")
        x = exact_constant(f"--opt {name}", val, "a positive real number")
        if not x.is_positive:
            raise InvalidArgument(f"--opt {name}={val}; expected a positive real number")
        out[by_name[name]] = x
    return out


# ---- proven facts ------------------------------------------------------------------------------------------------
def time_change(opt: Optimizer, block: str = "V", *, n: int = 4, planted: bool = False) -> dict:
    r"""The flow of ``block`` is gradient flow on a new clock, proven [D].

    If $\dot\theta=-\lambda g$ with $\lambda>0$ free of $g$, $\theta$ (:meth:`Optimizer.gf_multiplier`), then
    $\theta(s)=\theta_{GF}(\tau(s))$ with $d\tau/ds=\lambda$: the chain rule $\frac{d}{ds}\theta_{GF}(\tau(s))=
    -g\,\lambda$ equals the flow (proven), so the orbits are the same, traversed on the clock $\tau$. If moreover
    $\lambda=1/\sqrt{G_2}$, the speed $\sum_i\dot\theta_i^2=1$ is proven on ``n`` coordinates with
    $G_2=\sum_ig_i^2$: the new clock is the arc length of the gradient-flow path. ``planted`` replaces
    $\lambda$ by $\lambda^2$ (the negative control: the unit speed is then disproved). Returns ``{"multiplier",
    "proofs": [(label, ProofResult)], "arc_length": bool}``; ``multiplier`` ``None`` (no proofs) for a flow that
    is not a positive multiple of gradient flow. With ``planted`` the factorization and $\lambda>0$ are still
    proven for the true $\lambda$; only the speed uses $\lambda^2$ (so a flow with $\lambda=G_2^{-1/4}$ passes the
    planted speed: OPT.NGF's witness).
    """
    n = check_int("n", n, minimum=1, maximum=12)
    lam = opt.gf_multiplier(block)
    if lam is None:
        return {"multiplier": None, "proofs": [], "arc_length": False}
    flow = opt.rules[block].flow[theta]
    proofs = [(f"{opt.name}/{block}: flow = lambda * (-g)", prove_zero(flow - lam * (-g))),
              (f"{opt.name}/{block}: lambda > 0", _truth(lam.is_positive, f"lambda = {lam}"))]
    if planted:  # the clock's speed only: the factorization above is the definition's
        lam = lam**2
    gs = sp.symbols(f"g1:{n + 1}", real=True)
    norm2 = sp.Add(*[x**2 for x in gs])
    arc = False
    if lam.free_symbols <= {G2} and G2 in lam.free_symbols:
        speed = sp.Add(*[(lam * x).subs(G2, norm2)**2 for x in gs])
        res = prove_zero(speed - 1)
        proofs.append((f"{opt.name}/{block}: unit speed sum_i (dtheta_i/ds)^2 = 1 (n = {n})", res))
        arc = res.status == "proved"
    return {"multiplier": lam, "proofs": proofs, "arc_length": arc}


def _truth(value, detail) -> ProofResult:
    if value is True:
        return ProofResult("proved", "assumptions", detail)
    if value is False:
        return ProofResult("disproved", "assumptions", detail)
    return ProofResult("undecided", "assumptions", detail)


def muon_closed_form(d: int = 2, n: int = 3, *, planted: bool = False) -> list:
    r"""The polar factor of the rank-one $V$-gradient, proven for ``d`` x ``n`` [D].

    $\nabla_VF=g\varphi^\top$ ($g=\nabla\mathcal L(\beta)\ne0$, $\varphi=\varphi(a)\ne0$). Claimed:
    $P=g\varphi^\top/(\lVert g\rVert\lVert\varphi\rVert)=\nabla_VF/\lVert\nabla_VF\rVert_F$ and
    $H=\tfrac{\lVert g\rVert}{\lVert\varphi\rVert}\varphi\varphi^\top$. Proven: $PH=G$ (a factorization),
    $H^2=G^\top G$ with $H=c\,\varphi\varphi^\top$, $c>0$ (so $H=(G^\top G)^{1/2}$, positive semidefinite),
    $P^\top P=\varphi\varphi^\top/\lVert\varphi\rVert^2$ (a partial isometry whose initial space is the row space
    of $G$: with these, the polar factor is unique) and $\lVert G\rVert_F^2=\lVert g\rVert^2\lVert\varphi\rVert^2$
    (so $P=G/\lVert G\rVert_F$, both norms being positive square roots). ``planted`` drops
    $\lVert\varphi\rVert$ from $P$ (the negative control: disproved).
    """
    d = check_int("d", d, minimum=1, maximum=5)
    n = check_int("n", n, minimum=1, maximum=6)
    gv = sp.Matrix(sp.symbols(f"g1:{d + 1}", real=True))
    ph = sp.Matrix(sp.symbols(f"p1:{n + 1}", positive=True))
    ng, nphi = sp.sqrt(sum(x**2 for x in gv)), sp.sqrt(sum(x**2 for x in ph))
    G = gv * ph.T
    P = G / (ng * (1 if planted else nphi))
    H = (ng / nphi) * ph * ph.T
    frob2 = sum(x**2 for x in G)
    tag = f"muon d={d} n={n}"
    return [(f"{tag}: P H = G", prove_zero(P * H - G)),
            (f"{tag}: H^2 = G^T G", prove_zero(H * H - G.T * G)),
            (f"{tag}: P^T P = projector onto the row space", prove_zero(P.T * P - ph * ph.T / nphi**2)),
            (f"{tag}: ||G||_F^2 = ||g||^2 ||phi||^2 (so P = G / ||G||_F)",
             prove_zero(frob2 - ng**2 * (1 if planted else nphi**2)))]


def sum_of_logits(opt: Optimizer, n: int = 3) -> ProofResult:
    r"""Whether $\frac{d}{dt}\sum_ia_i=0$ survives the optimizer (gradient flow: claim C04) [D].

    Shift invariance of the link gives $\sum_ig_i=0$ for the $a$-gradient; a state $s$ with $s(0)=0$ whose flow is
    linear in $(g, s)$ keeps $\sum_is_i=0$ too (the same linear map on every coordinate). Both are substituted
    ($g_n=-\sum_{i<n}g_i$, $s_n=-\sum_{i<n}s_i$) into $\sum_i\dot a_i$, which is then decided by
    :func:`theorems.prove_zero`: ``proved`` (the invariant survives) or ``disproved`` with a counterexample point.
    """
    n = check_int("n", n, minimum=2, maximum=6)
    r = opt.rules["a"]
    gs = list(sp.symbols(f"g1:{n + 1}", real=True))
    sub = {gs[-1]: -sp.Add(*gs[:-1])}
    states = {}
    for s, init in r.state.items():
        xs = list(sp.symbols(f"{s}1:{n + 1}", real=True))
        f = r.flow[s]
        linear = init == 0 and all(sp.diff(f, u, 2) == 0 for u in (g, s)) and sp.diff(f, g, s) == 0 \
            and f.subs({g: 0, s: 0}) == 0 and not (f.free_symbols & {theta})
        if linear:
            sub[xs[-1]] = -sp.Add(*xs[:-1])
        states[s] = xs
    total = sp.Add(*[r.flow[theta].subs({g: gs[i], **{s: xs[i] for s, xs in states.items()}}) for i in range(n)])
    total = total.subs(sub)
    if G2 in total.free_symbols and r.norm == "block":
        total = total.subs(G2, sp.Add(*[x**2 for x in gs]).subs(sub))
    return prove_zero(total)


def polar_rule(opt: Optimizer) -> bool:
    r"""Whether the $V$ rule is $\dot V=-\nabla_VF/\lVert\nabla_VF\rVert_F$ with the block norm (proven by
    :func:`theorems.prove_zero`, read off the definition): by :func:`muon_closed_form` that is
    $-\operatorname{polar}(\nabla_VF)$, the gradient being rank one."""
    r = opt.rules["V"]
    return r.norm == "block" and not r.state and prove_zero(r.flow[theta] + g / sp.sqrt(G2)).status == "proved"


def derive_facts(opt: Optimizer, *, n: int = 3) -> list:
    r"""What ``softpolar derive --optimizer NAME`` shows and proves: ``[(label, statement, ProofResult or None)]``.

    The two forms of each block; the limit of the flow at $t=0$ where it is $0/0$; the time change to gradient
    flow (:func:`time_change`, per block; a flow with different multipliers on the two blocks is not a time change
    of the whole flow); the polar-factor closed form when the $V$ rule is the block-normalized gradient
    (:func:`polar_rule`, :func:`muon_closed_form`); whether $\sum_ia_i$ is kept (:func:`sum_of_logits`, claim C04
    of gradient flow). Every positive fact comes with its negative control (``planted``), shown as disproved.
    """
    out = []
    blocks = ("V", "a") if opt.rules["V"] is not opt.rules["a"] else ("V",)
    for b in blocks:
        r = opt.rules[b]
        where = b if len(blocks) == 2 else "V and a"
        fl = ", ".join(f"d{s}/dt = {e}" for s, e in r.flow.items())
        if any(G2 in e.free_symbols for e in r.exprs()):
            fl += f"; G2 = |grad|^2 over {'the block' if r.norm == 'block' else 'all parameters'}"
        out.append((f"continuous form ({where})", fl, None))
        st = "; ".join(f"{s} <- {e}" for s, e in r.step)
        if r.state:
            st += "; initial " + ", ".join(f"{s} = {v}" for s, v in r.state.items())
        out.append((f"discrete form ({where})", st, None))
        if opt.smooth and r.state:
            start = opt.flow_at_start(b)
            if start != {s: e.subs({**r.state, t: 0}) for s, e in r.flow.items()}:
                out.append((f"flow at t = 0 ({where}), a limit", f"dtheta/dt(0) = {start[theta]}", None))
    mult = {b: opt.gf_multiplier(b) for b in ("V", "a")}
    if all(m is not None for m in mult.values()):
        same = sp.simplify(mult["V"] - mult["a"]) == 0 and opt.rules["V"].norm == opt.rules["a"].norm
        for b in blocks:
            res = time_change(opt, b, n=4)
            label = "time change" + ("" if len(blocks) == 1 else f" ({b} block)")
            clock = ("the arc length of the gradient-flow path" if res["arc_length"]
                     else f"dtau/ds = {res['multiplier']}")
            stmt = (f"same orbits as gradient flow on the clock {clock}" if same else
                    f"the {b} block moves as gradient flow times {res['multiplier']}; the blocks' multipliers differ, "
                    "so the whole flow is not a time change of gradient flow")
            for lab, pr in res["proofs"]:
                out.append((f"{label}: {lab}", stmt, pr))
            ctrl = time_change(opt, b, n=4, planted=True)
            if res["arc_length"]:
                out.append((f"{label}, control: lambda^2 instead of lambda", "unit speed must fail",
                            ctrl["proofs"][-1][1]))
    else:
        out.append(("time change", "not a positive multiple of gradient flow (the multiplier depends on g or on "
                                   "optimizer states): orbits may differ", None))
    if polar_rule(opt):
        for lab, pr in muon_closed_form(2, 3):
            out.append((f"polar factor: {lab}", "dV/dt = -polar(grad_V F) = -grad_V F / ||grad_V F||_F", pr))
        bad = [pr for _, pr in muon_closed_form(2, 3, planted=True)]
        out.append(("polar factor, control: P = G / ||g|| (||phi|| dropped)", "must fail",
                    next((pr for pr in bad if pr.status == "disproved"), bad[0])))
    res = sum_of_logits(opt, n)
    out.append((f"sum of logits (C04), n = {n}",
                "d/dt sum_i a_i = 0 survives" if res.status == "proved" else
                "d/dt sum_i a_i = 0 does not survive (counterexample)" if res.status == "disproved" else
                "undecided", res))
    return out


def quasi_static_flow(opt: Optimizer, block: str, hyper=None):
    r"""The quasi-static $\dot\theta=f^*(g)$ of ``block`` [D]: each state at the zero of its own flow, and
    $t\to\infty$ (every $e^{ct+d}$ with $c<0$ at the hyperparameters' values dropped: the bias corrections
    $\to1$). Returns ``(f*, None)`` or ``(None, reason)``. ``hyper``: ``{symbol: value}`` (the decay rates' signs
    are read there; default: the definition's)."""
    hv = dict(opt.hyper if hyper is None else hyper)
    r = opt.rules[block]
    sub = {}
    for s, e in r.flow.items():
        if s == theta:
            continue
        sol = sp.solve(sp.Eq(e, 0), s)
        if len(sol) != 1:
            return None, f"the state {s}'s flow {sp.sstr(e)} = 0 has {len(sol)} solutions in it, not one"
        sub[s] = sol[0]
    f = r.flow[theta].subs(sub)
    # t -> oo: every exp(c t + d) with c < 0 (a bias correction's decay) goes to 0; sympy.limit in t fails on
    # these nested forms (an IndexError inside powsimp), and the decay is all that t enters through
    f = f.replace(lambda e: isinstance(e, sp.exp) and t in e.free_symbols
                  and sp.diff(e.args[0], t, 2) == 0 and sp.diff(e.args[0], t).subs(hv).is_negative,
                  lambda e: sp.Integer(0))
    f = sp.simplify(f)
    if t in f.free_symbols:
        return None, (f"the {block}-flow {sp.sstr(f)} still depends on t once every decaying exp(-c t) is "
                      "dropped")
    return f, None


def quasi_static(opt: Optimizer, hyper=None) -> Optimizer:
    r"""The stateless optimizer $\dot\theta=f^*(g)$ of :func:`quasi_static_flow` on both blocks (its discrete
    form: the Euler step of that flow), named ``NAME-quasi-static``: the flow that a stateful optimizer's moments
    are slaved to once they relax (:func:`numerics.optim.slaved_flow` continues the full flow with it)."""
    rules = {}
    for blk in BLOCKS:
        f, why = quasi_static_flow(opt, blk, hyper)
        if f is None:
            raise InvalidArgument(f"optimizer {opt.name!r}: no quasi-static flow: {why}")
        rules[blk] = Rule(flow={theta: f}, step=[(theta, theta + lr * f)], hyper=opt.hyper,
                          norm=opt.rules[blk].norm, where=f"optimizer {opt.name!r} (quasi-static, {blk})")
    return Optimizer.blockwise(f"{opt.name}-quasi-static", V=rules["V"], a=rules["a"], hyper=opt.hyper,
                               provenance="D")


__all__ = ["g", "theta", "G2", "t", "k", "lr", "Rule", "Optimizer", "BUILTIN_OPTIMIZERS", "GD", "NGD", "SIGN",
           "ADAM", "RMSPROP", "MUON", "register_optimizer", "all_optimizers", "get_optimizer", "hyper_values",
           "OptimizerRegistry", "GLOBAL_REGISTRY", "current_registry", "optimizer_scope",
           "quasi_static", "quasi_static_flow", "time_change", "muon_closed_form", "sum_of_logits", "polar_rule",
           "derive_facts"]
