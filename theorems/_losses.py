r"""Losses $\mathcal L(\beta)$ of the output $\beta=V\varphi(a)\in\mathbb R^d$: one public definition.

A loss is built from SymPy expressions in one of four *forms* (the form is the structure
the engines exploit; what they compute inside it is generated from the expressions):

* :meth:`Loss.margin` ``(name, ell=...)``: $\mathcal L=\ell(\langle w,\beta\rangle)$, target
  direction $w$; $\nabla\mathcal L=\ell'(\langle w,\beta\rangle)\,w$ (built-in ``logistic``,
  $\ell(z)=\operatorname{softplus}(-z)$);
* :meth:`Loss.separable` ``(name, f=..., variables=(u, y))``: $\mathcal L=\sum_r f((X\beta)_r,y_r)$
  with an optional design $X$ ($m\times d$, default $I_d$); $\nabla\mathcal L=X^\top\partial_uf(X\beta,y)$
  (built-in ``square``, $f=\tfrac12(u-y)^2$);
* :meth:`Loss.cross_entropy` ``(name, link=...)``: $\mathcal L=-\sum_kp_k\log\psi_k(\beta)$ for a
  normalized link $\psi_k=h(\beta_k)/(c+\sum_lk(\beta_l))$;
  $\partial_j\mathcal L=-p_j\,h'(\beta_j)/h(\beta_j)+(\sum_kp_k)\,k'(\beta_j)/Z$ (built-in ``kl``,
  $\psi=\operatorname{softmax}$: $(\sum p)\operatorname{softmax}(\beta)-p$; equals
  $\mathrm{KL}(p\,\|\,\operatorname{softmax}\beta)+H(p)$ when $\sum p=1$);
* ``Loss(name, value=fn)``: any scalar $\mathcal L(\beta,\mathrm{target})$ built by
  ``fn(beta, target)`` from SymPy matrices (gradient by SymPy, code generated per size $d$).

:meth:`Loss.gradient` differentiates the definition component by component;
:meth:`Loss.gradient_structured` is the closed vector form above, proven equal to it by the
identity ``loss.gradient`` (and inside ``flow.structured``).
"""
from __future__ import annotations

from functools import cached_property

import sympy as sp

from .errors import InvalidArgument, check_int, show
from ._functions import softplus
from ._links import BUILTIN_LINKS, Link, check_name, check_real, is_smooth, scalar_expr

_z = sp.Symbol("z", real=True)
_u = sp.Symbol("u", real=True)
_yv = sp.Symbol("y", real=True)

#: The forms of a loss (the structure the engines exploit).
FORMS = ("margin", "separable", "cross_entropy", "general")

_LOSS_FIELDS = frozenset({"name", "form", "target_name", "latex", "provenance", "expr_ell", "expr_f",
                          "link", "fn", "design", "target_positive"})
_SEALED_LOSS = frozenset({"value", "gradient", "gradient_structured", "ell", "dell", "f", "fu", "form",
                          "key", "same_definition", "smooth", "smooth_at", "min_d", "expr_ell", "expr_f", "link",
                          "fn", "design", "target_positive", "target_size"})


def _dot(x: sp.Matrix, y: sp.Matrix):
    return sp.Add(*[xi * yi for xi, yi in zip(x, y)])


class Loss:
    r"""A loss of the output (see the module docstring for the four forms).

    ``Loss(name, value=fn, target="t")`` is the general form: ``fn(beta, target)`` returns the
    scalar $\mathcal L$ for SymPy column matrices ``beta`` ($d$) and ``target`` (``target_size(d)``
    entries, default $d$). The other forms have their own constructors.

    Attributes: ``name``, ``form``, ``target_name`` (``w``, ``y``, ``p``, ...), ``latex``,
    ``provenance`` (``U`` for user-defined), ``design`` (a design matrix $X$ is accepted: separable
    form), ``target_positive`` (the target is a vector of positive weights: cross-entropy),
    ``min_d`` (smallest meaningful output dimension), ``smooth`` (at every size; a general form: ``False``, not
    known without a size) and :meth:`smooth_at` (at one output dimension).

    Raises:
        InvalidArgument: a bad name or expression (two free symbols, a string), a subclass
            overriding a derived method.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        bad = sorted(_SEALED_LOSS & set(vars(cls)))
        if bad:
            raise InvalidArgument(
                f"Loss subclass {cls.__name__} overrides {', '.join(bad)}: the engines compute from the definition "
                "only, so an override would be ignored; use Loss.margin(name, ell=...), Loss.separable(...), "
                "Loss.cross_entropy(...) or Loss(name, value=fn)")

    def __init__(self, name: str, value=None, *, target: str = "t", latex: str | None = None,
                 provenance: str = "U", _form: str = "general", _parts: dict | None = None):
        check_name("loss", name)
        check_name("target", target)
        parts = dict(_parts or {})
        if _form == "general":
            if not callable(value) or isinstance(value, (sp.Basic, str)):
                raise InvalidArgument(f"loss {name!r}: value={show(value)}; expected a function (beta, target) -> "
                                      "SymPy expression, or use Loss.margin(name, ell=...)")
            parts["fn"] = value
        elif value is not None:
            raise InvalidArgument(f"loss {name!r}: value= is for the general form only")
        for k, v in (("name", name), ("form", _form), ("target_name", target), ("provenance", provenance),
                     ("expr_ell", parts.get("ell")), ("expr_f", parts.get("f")), ("link", parts.get("link")),
                     ("fn", parts.get("fn")), ("design", _form == "separable" and parts.get("design", True)),
                     ("target_positive", _form == "cross_entropy")):
            object.__setattr__(self, k, v)
        if _form == "general":
            self._probe()
        object.__setattr__(self, "latex", latex if latex is not None else self._default_latex())

    def __setattr__(self, key, value):
        if key in _LOSS_FIELDS and key in self.__dict__:
            raise AttributeError(f"Loss.{key} is read-only (a definition does not change)")
        object.__setattr__(self, key, value)

    # ---- constructors -------------------------------------------------------------------------
    @classmethod
    def margin(cls, name: str, ell, *, target: str = "w", latex: str | None = None, provenance: str = "U"):
        r"""$\mathcal L(\beta)=\ell(\langle w,\beta\rangle)$; ``ell`` an expression in one free symbol or a Lambda."""
        e = scalar_expr(f"loss {name!r}: ell", ell, _z)
        return cls(name, target=target, latex=latex, provenance=provenance, _form="margin", _parts={"ell": e})

    @classmethod
    def separable(cls, name: str, f, *, variables=None, target: str = "y", design: bool = True,
                  latex: str | None = None, provenance: str = "U"):
        r"""$\mathcal L(\beta)=\sum_rf((X\beta)_r,y_r)$; ``f`` an expression in ``variables = (u, y)``
        (output coordinate, target coordinate) or a two-variable ``Lambda``."""
        if isinstance(f, sp.Lambda):
            if len(f.variables) != 2:
                raise InvalidArgument(f"loss {name!r}: f is a Lambda of {len(f.variables)} variables; expected 2")
            e = f(_u, _yv)
        else:
            if variables is None or len(tuple(variables)) != 2 or \
                    not all(isinstance(v, sp.Symbol) for v in variables):
                raise InvalidArgument(f"loss {name!r}: variables={show(variables)}; expected two SymPy symbols "
                                      "(u, y): the output coordinate and the target coordinate")
            try:
                e = sp.sympify(f, strict=True)
            except (sp.SympifyError, TypeError) as err:
                raise InvalidArgument(f"loss {name!r}: f={show(f)}; expected a SymPy expression") from err
            extra = e.free_symbols - set(variables)
            if extra:
                raise InvalidArgument(f"loss {name!r}: f has free symbols {sorted(map(str, extra))} besides "
                                      f"{[str(v) for v in variables]}")
            e = e.xreplace(dict(zip(variables, (_u, _yv))))
        e = check_real(f"loss {name!r}: f", e, (_u, _yv))
        if _u not in e.free_symbols:
            raise InvalidArgument(f"loss {name!r}: f={show(e)} does not depend on the output coordinate")
        return cls(name, target=target, latex=latex, provenance=provenance, _form="separable",
                   _parts={"f": e, "design": bool(design)})

    @classmethod
    def cross_entropy(cls, name: str, link: Link, *, target: str = "p", latex: str | None = None,
                      provenance: str = "U"):
        r"""$\mathcal L(\beta)=-\sum_kp_k\log\psi_k(\beta)$ for a normalized :class:`Link` $\psi$."""
        if not isinstance(link, Link) or not link.normalized:
            raise InvalidArgument(f"loss {name!r}: link={show(link)}; expected a normalized theorems.Link")
        return cls(name, target=target, latex=latex, provenance=provenance, _form="cross_entropy",
                   _parts={"link": link})

    # ---- identity -------------------------------------------------------------------------------
    @cached_property
    def key(self) -> tuple:
        """The definition (no name, no latex)."""
        if self.form == "margin":
            return ("margin", sp.srepr(self.expr_ell))
        if self.form == "separable":
            return ("separable", sp.srepr(self.expr_f), self.design)
        if self.form == "cross_entropy":
            return ("cross_entropy", self.link.key)
        return ("general", id(self.fn))

    def same_definition(self, other) -> bool:
        return isinstance(other, Loss) and self.key == other.key

    def __eq__(self, other):
        return isinstance(other, Loss) and (self.name, self.target_name, self.key) == \
            (other.name, other.target_name, other.key)

    def __hash__(self):
        return hash((self.name, self.key))

    def __repr__(self):
        if self.form == "margin":
            return f"Loss.margin({self.name!r}, ell={self.expr_ell})"
        if self.form == "separable":
            return f"Loss.separable({self.name!r}, f={self.expr_f})"
        if self.form == "cross_entropy":
            return f"Loss.cross_entropy({self.name!r}, link={self.link.name!r})"
        return f"Loss({self.name!r}, value={getattr(self.fn, '__name__', 'fn')})"

    def _default_latex(self) -> str:
        t = self.target_name
        if self.form == "margin":
            zz = sp.Symbol(r"\langle " + t + r",\beta\rangle")
            return r"\mathcal L(\beta)=" + sp.latex(self.expr_ell.xreplace({_z: zz}))
        if self.form == "separable":
            f = self.expr_f.xreplace({_u: sp.Symbol(r"(X\beta)_r"), _yv: sp.Symbol(t + "_r")})
            return r"\mathcal L(\beta)=\sum_r " + sp.latex(f)
        if self.form == "cross_entropy":
            return r"\mathcal L(\beta)=-\sum_k " + t + r"_k\log\psi_k(\beta),\ " + \
                self.link.latex.replace(r"\varphi", r"\psi").replace("(a)", r"(\beta)").replace("a_", r"\beta_")
        return r"\mathcal L(\beta," + t + r")\ \text{(user-defined)}"

    def _probe(self):
        """Run the general form's function once (d = 2) so that a broken definition fails at construction."""
        b = sp.Matrix(sp.symbols("b_1 b_2", real=True))
        t = sp.Matrix(sp.symbols("t_1 t_2", real=True))
        try:
            out = sp.sympify(self.fn(b, t), strict=True)
        except InvalidArgument:
            raise
        except Exception as e:  # a user function: any failure is a bad definition
            raise InvalidArgument(f"loss {self.name!r}: value(beta, target) failed at d = 2: "
                                  f"{type(e).__name__}: {e}") from e
        if not isinstance(out, sp.Expr) or getattr(out, "is_Matrix", False) or out.free_symbols - set(b) - set(t):
            raise InvalidArgument(f"loss {self.name!r}: value(beta, target) must return a scalar SymPy expression "
                                  f"in beta and target only; got {show(out)}")

    # ---- derived pieces ------------------------------------------------------------------------
    @property
    def ell(self) -> sp.Lambda | None:
        """Margin loss $\\ell(z)$ (margin form), else ``None``."""
        return None if self.expr_ell is None else sp.Lambda(_z, self.expr_ell)

    @cached_property
    def dell(self) -> sp.Lambda | None:
        """$\\ell'(z)$, derived by differentiating :attr:`ell`."""
        return None if self.expr_ell is None else sp.Lambda(_z, sp.diff(self.expr_ell, _z))

    @property
    def f(self) -> sp.Lambda | None:
        """Separable form: $f(u,y)$ as a two-variable ``Lambda``."""
        return None if self.expr_f is None else sp.Lambda((_u, _yv), self.expr_f)

    @cached_property
    def fu(self) -> sp.Lambda | None:
        """Separable form: $\\partial_uf(u,y)$, derived."""
        return None if self.expr_f is None else sp.Lambda((_u, _yv), sp.diff(self.expr_f, _u))

    @property
    def min_d(self) -> int:
        """Smallest meaningful output dimension (cross-entropy over one class is identically 0)."""
        return 2 if self.form == "cross_entropy" else 1

    @cached_property
    def smooth(self) -> bool:
        """No non-smooth node in the defining expressions, at every output dimension.

        A general form's expression is built per size by a Python function, so its smoothness at one size says
        nothing about another (``|b_3 - t_3|`` may appear from $d=3$ on): without a size it is not known and
        ``smooth`` is ``False`` (conservative); :meth:`smooth_at` judges the size actually used."""
        if self.form == "margin":
            return is_smooth(self.expr_ell)
        if self.form == "separable":
            return is_smooth(self.expr_f)
        if self.form == "cross_entropy":
            return self.link.smooth
        return False

    def smooth_at(self, d: int) -> bool:
        r"""No non-smooth node in $\mathcal L$ at output dimension ``d`` (a general form is built at that ``d``;
        the other forms' expressions do not depend on it: :attr:`smooth`)."""
        if self.form != "general":
            return self.smooth
        d = check_int("d", d, minimum=1)
        cache = self.__dict__.setdefault("_smooth_at", {})
        if d not in cache:
            b = sp.Matrix([sp.Symbol(f"b_{k + 1}", real=True) for k in range(d)])
            t = sp.Matrix([sp.Symbol(f"t_{k + 1}", real=True) for k in range(self.target_size(d))])
            cache[d] = is_smooth(self.value(b, t))
        return cache[d]

    def target_size(self, d: int, X: sp.Matrix | None = None) -> int:
        """Entries of the target for output dimension ``d`` (rows of ``X`` for a separable loss with a design)."""
        return X.shape[0] if (self.design and X is not None) else d

    # ---- symbolic evaluation ----------------------------------------------------------------------
    def _rows(self, beta, X):
        if X is None:
            return beta
        if not self.design:
            raise InvalidArgument(f"loss {self.name!r}: a design matrix X exists only for a separable loss")
        return X * beta

    def value(self, beta: sp.Matrix, target: sp.Matrix, X: sp.Matrix | None = None):
        """$\\mathcal L(\\beta)$ from its definition."""
        beta, target = sp.Matrix(beta), sp.Matrix(target)
        if self.form == "margin":
            return self.expr_ell.xreplace({_z: _dot(target, beta)})
        if self.form == "separable":
            r = self._rows(beta, X)
            return sp.Add(*[self.expr_f.xreplace({_u: ri, _yv: ti}) for ri, ti in zip(r, target)])
        if self.form == "cross_entropy":
            psi = self.link.phi(beta)
            return -sp.Add(*[pk * sp.expand_log(sp.log(qk), force=True) for pk, qk in zip(target, psi)])
        self._rows(beta, X)
        return sp.sympify(self.fn(beta, target))

    def gradient(self, beta_symbols: sp.Matrix, target, X=None) -> sp.Matrix:
        """$\\nabla\\mathcal L$ at a point of free symbols, differentiated component by component."""
        L = self.value(beta_symbols, target, X)
        return sp.Matrix([sp.diff(L, b) for b in beta_symbols])

    def gradient_structured(self, beta: sp.Matrix, target: sp.Matrix, X: sp.Matrix | None = None) -> sp.Matrix:
        """The closed vector form of $\\nabla\\mathcal L(\\beta)$ (see the module docstring)."""
        beta, target = sp.Matrix(beta), sp.Matrix(target)
        if self.form == "margin":
            return self.dell(_dot(target, beta)) * target
        if self.form == "separable":
            r = self._rows(beta, X)
            fu = sp.Matrix([self.fu(ri, ti) for ri, ti in zip(r, target)])
            return fu if X is None else X.T * fu
        if self.form == "cross_entropy":
            K = self.link
            Z = K.normalizer(beta)
            total = sp.Add(*target)
            return sp.Matrix([-pk * K.dh(bk) / K.h(bk) + total * K.dk(bk) / Z for bk, pk in zip(beta, target)])
        syms = sp.Matrix([sp.Dummy(f"b{k}", real=True) for k in range(len(beta))])
        return self.gradient(syms, target, X).xreplace(dict(zip(syms, beta)))


#: The paper's three losses (built-ins; a user loss may not take these names).
BUILTIN_LOSSES: tuple[Loss, ...] = (
    Loss.margin("logistic", ell=softplus(-_z),
                latex=r"\mathcal L(\beta)=\log\left(1+e^{-\langle w,\beta\rangle}\right)", provenance="C"),
    Loss.separable("square", f=(_u - _yv) ** 2 / 2, variables=(_u, _yv), target="y",
                   latex=r"\mathcal L(\beta)=\tfrac12\|X\beta-y\|^2", provenance="C"),
    Loss.cross_entropy("kl", BUILTIN_LINKS[0], target="p",
                       latex=r"\mathcal L(\beta)=-\sum_k p_k\log\operatorname{softmax}(\beta)_k", provenance="C"),
)
