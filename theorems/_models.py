r"""The registry of links and losses: names for the CLI, definitions for everything else.

* :data:`LINKS`, :data:`LOSSES`: the paper's built-ins, read-only (registration goes through
  :func:`register`, never by writing into a dict); what the identity suite and the paper's claims
  enumerate by default;
* :data:`SINK_LINKS`: built-in links beyond the paper (softmax1, stablemax, softpick), read-only, and
  the built-in family ``ssmax-n<N>`` (Scalable-Softmax for N tokens, :func:`theorems._links.ssmax`),
  resolved from the name (the number of tokens is part of the definition, so of the name);
* :func:`register` ``(*definitions)``: make user :class:`~theorems.Link` / :class:`~theorems.Loss`
  objects available by name. A user name may not shadow a built-in (a definition under a built-in's
  name is accepted only if it *is* that built-in's definition: a no-op); registering a name twice
  with a different definition is refused (the same definition again is a no-op), so a name
  always means one definition within a process and caches keyed by it stay valid;
* :func:`load_models_file` ``(path)``: import a Python file and register its module-level
  ``Link``/``Loss`` objects (the CLI's ``--models FILE.py``);
* entry points of the group ``softpolar.models`` (installed packages): an entry point names a
  module, a ``Link``/``Loss``, or a list of them; loaded the first time a name is not found;
* :func:`get_link`, :func:`get_loss`: a name or a definition in, the definition out (an
  unregistered definition is registered), ``InvalidArgument`` for an unknown name;
* :func:`all_links`, :func:`all_losses`: every name known *now* (built-ins first; of the ``ssmax-n<N>``
  family, the members used so far);
* :func:`models_scope`: a scope for user links, losses and optimizers (the CLI runs each command in one):
  what is registered inside it is visible there only, so one in-process run's ``--models`` does not leak into
  the next. A name still means one definition in the whole process (kernel caches are keyed by names): a later
  scope may register the same definition again, not another one. Entry points are registered process-wide.
"""
from __future__ import annotations

import contextlib
import contextvars
import importlib.util
import os
import sys
import threading
from types import MappingProxyType
import importlib.metadata

from .errors import InvalidArgument, show
from . import _links as _links_module
from ._links import (BUILTIN_LINKS, Link, SINK_BUILTIN_LINKS, SSMAX_NAME, SSMAX_PATTERN, _SSMAX_CACHE,
                     builtin_family_link)
from ._losses import BUILTIN_LOSSES, Loss
from .optimizers import Optimizer, optimizer_scope, register_optimizer
from ._deadline import setup_deadline
from ._functions import sigmoid, softplus

#: The paper's six links, by name (read-only).
LINKS = MappingProxyType({link.name: link for link in BUILTIN_LINKS})
#: The built-in links beyond the paper (attention-sink normalizations), by name (read-only); with the family
#: ``ssmax-n<N>`` (:func:`builtin_link`) they are built-ins too: no user link may take their names.
SINK_LINKS = MappingProxyType({link.name: link for link in SINK_BUILTIN_LINKS})
#: The paper's three losses, by name (read-only).
LOSSES = MappingProxyType({loss.name: loss for loss in BUILTIN_LOSSES})

#: Entry-point group scanned for user models of installed packages.
ENTRY_POINT_GROUP = "softpolar.models"



class _Scope:
    """The user links and losses registered in one :func:`models_scope` (over its parent's)."""

    def __init__(self, parent: "_Scope | None" = None):
        self.parent = parent
        self.own: dict[str, dict] = {"link": {}, "loss": {}}

    def view(self, kind: str) -> dict:
        return {**(self.parent.view(kind) if self.parent is not None else {}), **self.own[kind]}


#: the process's scope (what :func:`register` writes outside any :func:`models_scope`; entry points always)
_GLOBAL_SCOPE = _Scope()
_USER_LINKS: dict[str, Link] = _GLOBAL_SCOPE.own["link"]
_USER_LOSSES: dict[str, Loss] = _GLOBAL_SCOPE.own["loss"]
_SCOPE: contextvars.ContextVar = contextvars.ContextVar("softpolar_models_scope", default=_GLOBAL_SCOPE)
#: every user definition registered in the process, by kind and name: a name means one definition (the kernel
#: caches of numerics are keyed by names), in every scope
_DEFINED: dict[str, dict] = {"link": {}, "loss": {}}


@contextlib.contextmanager
def models_scope():
    """A scope for user links, losses and optimizers (:func:`theorems.optimizers.optimizer_scope` inside):
    registrations inside it are visible in it only and gone once it exits. A ``contextvars`` variable, as the
    optimizers' scope."""
    token = _SCOPE.set(_Scope(_SCOPE.get()))
    try:
        with optimizer_scope():
            yield
    finally:
        _SCOPE.reset(token)
_LOCK = threading.RLock()
_ENTRY_POINTS_LOADED = False


def builtin_link(name) -> Link | None:
    """The built-in link called ``name`` (the paper's, a sink normalization, or ``ssmax-n<N>``), else ``None``."""
    if not isinstance(name, str):
        return None
    return LINKS.get(name) or SINK_LINKS.get(name) or builtin_family_link(name)


def builtin_link_names() -> list[str]:
    """The built-in link names as shown to users: the paper's, the sink normalizations, ``ssmax-n<N>``."""
    return [*LINKS, *SINK_LINKS, SSMAX_PATTERN]


def _canonical_link(link: Link) -> Link:
    """An unpickled link: the built-in object for a built-in definition, else the definition, registered."""
    b = builtin_link(link.name)
    if b is not None and b.same_definition(link):
        return b
    return register(link)


def _register_one(obj, origin: str = "", scope: _Scope | None = None) -> None:
    if isinstance(obj, Optimizer):  # theorems.optimizers keeps its own names (same rules: no shadowing, one definition)
        try:
            register_optimizer(obj)
        except InvalidArgument as e:
            raise InvalidArgument(f"{e}" + (f" (from {origin})" if origin else "")) from None
        return
    if isinstance(obj, Link):
        same, kind = builtin_link(obj.name), "link"
        reserved = same is not None or SSMAX_NAME.match(obj.name) is not None  # ssmax-n0, ssmax-n1: reserved too
    elif isinstance(obj, Loss):
        same, kind = LOSSES.get(obj.name), "loss"
        reserved = same is not None
    else:
        raise InvalidArgument(f"register: got {show(obj)}; expected a theorems.Link or theorems.Loss")
    where = f" (from {origin})" if origin else ""
    if reserved:
        # the built-in's own object, or the same definition under its name (e.g. a user file written before the
        # name became a built-in): nothing to register, the name keeps its one definition
        if same is not None and (same is obj or same.same_definition(obj)):
            return
        raise InvalidArgument(f"{kind} {obj.name!r}{where}: a user {kind} may not shadow the built-in "
                              f"{kind} of that name (a different definition); choose another name")
    old = _DEFINED[kind].get(obj.name)
    if old is not None and old != obj:
        raise InvalidArgument(f"{kind} {obj.name!r}{where}: already registered with another definition "
                              f"({old!r}) in this process (a name means one definition); choose another name")
    _DEFINED[kind][obj.name] = obj
    (scope or _SCOPE.get()).own[kind][obj.name] = obj


def register(*definitions):
    """Register user links and losses by their names; returns the definitions (one, or a tuple).

    Raises ``InvalidArgument`` for a non-definition, a built-in name, or a name already
    registered with a different definition.
    """
    with _LOCK:
        for obj in definitions:
            _register_one(obj)
    return definitions[0] if len(definitions) == 1 else definitions


def _definitions_in(namespace: dict) -> list:
    return [v for k, v in namespace.items() if not k.startswith("_") and isinstance(v, (Link, Loss, Optimizer))]


def load_models_file(path, *, timeout: float | None = None) -> list:
    """Import the Python file ``path`` and register its module-level ``Link``/``Loss`` objects.

    Returns the definitions (in file order). Raises ``InvalidArgument`` for a missing file, a
    file that is not ``.py``, not a regular file (a FIFO, a device, a folder), a file that fails to import
    (the error named), that calls ``sys.exit`` while loading, that takes longer than ``timeout`` seconds
    (:func:`theorems._deadline.setup_deadline`), a file that defines no ``Link``/``Loss``, or a name clash.
    The file is trusted code: it is executed.
    """
    p = os.fspath(path)
    if not p.endswith(".py"):
        raise InvalidArgument(f"--models {p!r}: expected a Python file (.py) defining Link/Loss objects")
    if not os.path.isfile(p):
        if os.path.exists(p):
            raise InvalidArgument(f"--models {p!r}: not a regular file (a FIFO, device or folder); expected a "
                                  "Python file")
        raise InvalidArgument(f"--models {p!r}: no such file")
    mod_name = "softpolar_user_models_" + str(abs(hash(os.path.abspath(p))))
    spec = importlib.util.spec_from_file_location(mod_name, p)
    module = importlib.util.module_from_spec(spec)
    try:
        with setup_deadline(timeout, f"--models {p!r}: loading it"):
            spec.loader.exec_module(module)
    except InvalidArgument as e:
        raise InvalidArgument(f"--models {p!r}: {e}" if not str(e).startswith("--models") else str(e)) from e
    except SystemExit as e:    # sys.exit(0) in a definitions file must not end the command silently
        raise InvalidArgument(f"--models {p!r}: the file called sys.exit({e.code!r}) while loading; expected a "
                              "file that only defines Link/Loss objects") from None
    except Exception as e:  # a user file: any failure is reported in one line
        raise InvalidArgument(f"--models {p!r}: importing it failed: {type(e).__name__}: {e}") from e
    defs = _definitions_in(vars(module))
    if not defs:
        raise InvalidArgument(f"--models {p!r}: defines no module-level theorems.Link, theorems.Loss or "
                              "theorems.Optimizer")
    with _LOCK:
        for obj in defs:
            _register_one(obj, origin=p)
    sys.modules.setdefault(mod_name, module)
    return defs


def load_entry_points(*, force: bool = False) -> list:
    """Register the definitions of every ``softpolar.models`` entry point (once per process)."""
    global _ENTRY_POINTS_LOADED
    with _LOCK:
        if _ENTRY_POINTS_LOADED and not force:
            return []
        _ENTRY_POINTS_LOADED = True

        out = []
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            try:
                obj = ep.load()
            except Exception as e:  # a third-party package
                raise InvalidArgument(f"entry point {ep.name!r} of {ENTRY_POINT_GROUP}: loading failed: "
                                      f"{type(e).__name__}: {e}") from e
            if isinstance(obj, (Link, Loss)):
                defs = [obj]
            elif isinstance(obj, (list, tuple)):
                defs = list(obj)
            else:
                defs = _definitions_in(vars(obj)) if hasattr(obj, "__dict__") else []
            for d in defs:
                _register_one(d, origin=f"entry point {ep.name}", scope=_GLOBAL_SCOPE)
            out.extend(defs)
        return out


def _lookup(kind: str, x, builtin):
    """``builtin``: name -> built-in definition or ``None``; user definitions: those of the current scope."""
    cls = Link if kind == "link" else Loss
    if isinstance(x, cls):
        with _LOCK:
            _register_one(x)
        return x
    if not isinstance(x, str):
        raise InvalidArgument(f"{kind}={show(x)} is not allowed; expected a name or a theorems.{cls.__name__}")
    found = builtin(x)
    if found is not None:
        return found
    user = _SCOPE.get().view(kind)
    if x in user:
        return user[x]
    if not _ENTRY_POINTS_LOADED:
        load_entry_points()
        user = _SCOPE.get().view(kind)
        if x in user:
            return user[x]
    shown = builtin_link_names() if kind == "link" else list(LOSSES)
    names = ", ".join(repr(n) for n in shown + sorted(user))
    hint = ""
    if kind == "link" and isinstance(x, str) and x.startswith("ssmax"):
        hint = ("; Scalable-Softmax's scale s log N depends on the number of tokens N, so N is part of the name: "
                "ssmax-n<N> with an integer N >= 2 (e.g. ssmax-n4; another scale: theorems._links.ssmax(N, scale))")
    raise InvalidArgument(f"{kind}={show(x)} is not allowed; expected one of {names} (a user {kind}: define "
                          f"it with theorems.{cls.__name__} and register it, or pass --models FILE.py){hint}")


def get_link(name) -> Link:
    """The link called ``name`` (or ``name`` itself if it is a :class:`Link`, registered on the way)."""
    return _lookup("link", name, builtin_link)


def get_loss(name) -> Loss:
    """The loss called ``name`` (or ``name`` itself if it is a :class:`Loss`, registered on the way)."""
    return _lookup("loss", name, LOSSES.get)


def link_name(x) -> str:
    """The registered name of a link given by name or definition."""
    return get_link(x).name


def loss_name(x) -> str:
    """The registered name of a loss given by name or definition."""
    return get_loss(x).name


def all_links() -> dict[str, Link]:
    """Every link known now: built-ins first (the paper's, the sink normalizations, the ``ssmax-n<N>`` used so far,
    by N), then user links in name order."""
    family = {K.name: K for (n, s), K in sorted(_SSMAX_CACHE.items(), key=lambda kv: kv[0][0]) if s == 1}
    return {**LINKS, **SINK_LINKS, **family, **dict(sorted(_SCOPE.get().view("link").items()))}


def all_losses() -> dict[str, Loss]:
    """Every loss known now: built-ins first, then user losses in name order."""
    return {**LOSSES, **dict(sorted(_SCOPE.get().view("loss").items()))}


def is_builtin(x) -> bool:
    """Whether a link/loss (name or definition) is a built-in (the paper's, or a built-in link beyond it); a
    definition counts only as the built-in object itself."""
    if isinstance(x, Link):
        return builtin_link(x.name) is x
    if isinstance(x, Loss):
        return LOSSES.get(x.name) is x
    return builtin_link(x) is not None or x in LOSSES


def is_paper_link(x) -> bool:
    """Whether a link (name or definition) is one of the paper's six built-ins (:data:`LINKS`)."""
    if isinstance(x, Link):
        return LINKS.get(x.name) is x
    return x in LINKS


def same_link(x, y) -> bool:
    """Whether two links (names or definitions) have the same definition, whatever their names."""
    return get_link(x).same_definition(get_link(y))


def same_loss(x, y) -> bool:
    """Whether two losses (names or definitions) have the same definition, whatever their names.

    Engines use it where a derivation holds for one definition only (the logistic clock, the freeze
    bounds of the square and kl losses): the test is on the definition, never on the name.
    """
    return get_loss(x).same_definition(get_loss(y))


_CLOCK_CACHE: dict = {}


def has_internal_clock(x) -> bool:
    r"""Whether the loss ``x`` (a name or a definition) has the internal clock $d\tau=-\ell'(z)\,dt$ of the
    flow: a margin loss $\ell(\langle w,\beta\rangle)$ whose $-\ell'(z)$ SymPy proves positive for every real $z$
    (logistic: $\sigma(-z)$; exponential: $e^{-z}$). Engines decide on this, read off the definition, never on a
    name: the clock's derivation (:mod:`numerics.integrate._clock`) uses nothing else."""
    L = get_loss(x)
    if L.form != "margin":
        return False
    if L.key not in _CLOCK_CACHE:
        import sympy as sp

        z = sp.Symbol("z", real=True)
        g = (-L.dell(z)).replace(lambda e: isinstance(e, (softplus, sigmoid)), lambda e: e.rewrite(sp.exp))
        _CLOCK_CACHE[L.key] = bool(sp.simplify(g).is_positive)
    return _CLOCK_CACHE[L.key]


_links_module._CANONICAL = _canonical_link
