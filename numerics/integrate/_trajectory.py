r"""The notebook-facing interface shared by :class:`Trajectory` (one flow) and
:class:`BatchTrajectory` (a batch from :func:`numerics.integrate_batch`).

Both results offer

* a short ``repr`` (backend, method, clock, sizes, time span, final loss / entropy / argmax);
* :meth:`~TrajectoryAPI.to_numpy`: a dict of float64 arrays (``dtype=object`` keeps mpmath's
  ``mpf`` numbers), the output-time axis first: ``times`` (K,), ``a`` / ``weights`` (K, n) or
  (K, B, n), ``loss`` / ``entropy`` / ``max_weight`` / ``one_minus_max`` (K,) or (K, B),
  ``argmax`` int64, ``V`` (K, d, n) or (K, B, d, n);
* :meth:`~TrajectoryAPI.to_dict`: JSON-ready nested lists plus ``meta`` (decimal strings with
  ``dps`` digits for mpmath numbers when ``full_precision=True``);
* :meth:`~TrajectoryAPI.to_dataframe`: a long table, one row per output time (and batch
  element), when pandas is installed;
* :meth:`~TrajectoryAPI.plot`: weights and entropy against $t$ (:mod:`numerics.plot`).

float64 arrays round mpmath results to double precision; use ``to_dict(full_precision=True)``
(or the ``mpf`` lists on the :class:`Trajectory` itself) for the digits beyond that.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
import importlib.metadata as md
import platform

import mpmath
import numpy as np
from theorems import InvalidArgument
from ..plot import plot_trajectory
from ._npz import save_trajectory

#: distributions whose versions :func:`versions` records in every trajectory's ``meta``.
VERSIONED = ("numpy", "scipy", "mpmath", "torch", "heyoka")
_VERSIONS: dict = {}


def versions() -> dict:
    """``{'python', 'numpy', 'scipy', 'mpmath', 'torch', 'heyoka', 'platform'}``: the installed versions
    (``None`` when a package is absent), read from the package metadata (nothing is imported), once."""
    if not _VERSIONS:
        _VERSIONS["python"] = platform.python_version()
        for name in VERSIONED:
            try:
                _VERSIONS[name] = md.version(name)
            except md.PackageNotFoundError:
                _VERSIONS[name] = None
        _VERSIONS["platform"] = platform.platform()
    return dict(_VERSIONS)

#: the per-output-time fields, in the order of :meth:`TrajectoryAPI.to_numpy`
FIELDS = ("times", "a", "weights", "loss", "entropy", "max_weight", "argmax", "one_minus_max", "V")
_SCALAR_FIELDS = ("loss", "entropy", "max_weight", "one_minus_max", "argmax")


def _fmt(x, digits: int = 10) -> str:
    """``x`` to ``digits`` significant digits (mpf at its own precision); never raises."""
    if isinstance(x, mpmath.mpf):
        return mpmath.nstr(x, digits)
    try:
        return f"{float(x):.{digits}g}"
    except (TypeError, ValueError, OverflowError):
        return repr(x)


def _short(x) -> str:
    """Six significant digits, for the one-line ``repr``."""
    return "None" if x is None else _fmt(x, 6)


def _to_array(x, dtype):
    if x is None:
        return None
    if hasattr(x, "detach"):  # a torch tensor (torch is never imported here)
        x = x.detach().cpu().numpy()
    if dtype is object:
        return np.array(x, dtype=object)
    if isinstance(x, np.ndarray):
        return x.astype(dtype, copy=True)
    return np.array(_floats(x), dtype=dtype)


def _floats(x):
    if isinstance(x, (list, tuple)):
        return [_floats(v) for v in x]
    return float(x) if isinstance(x, mpmath.mpf) else x


class TrajectoryAPI:
    """Methods shared by :class:`Trajectory` and :class:`BatchTrajectory` (see module doc)."""

    #: True for a batch (a batch axis after the output-time axis)
    batched = False

    # -- what each result provides ------------------------------------------------------
    def _field(self, key):  # pragma: no cover - overridden
        raise NotImplementedError

    def _sizes(self) -> dict:  # pragma: no cover - overridden
        raise NotImplementedError

    def _optional_fields(self):
        return ()

    # -- shared interface ---------------------------------------------------------------
    def to_numpy(self, dtype=np.float64) -> dict:
        """Arrays keyed by field name, output-time axis first (``argmax`` as int64).

        ``dtype=object`` keeps the numbers as they are (``mpf`` for mpmath); the default
        rounds to float64. ``V`` is ``None`` for the reduced system (then ``u`` is given).
        """
        out = {}
        for key in FIELDS + tuple(self._optional_fields()):
            value = self._field(key)
            if key == "argmax" and dtype is not object:
                out[key] = _to_array(value, np.int64)
            else:
                out[key] = _to_array(value, dtype)
        return out

    def to_dict(self, full_precision: bool = True) -> dict:
        """JSON-ready dict (nested lists, ``meta``); the same layout as ``simulate --json``."""
        return self.to_json_dict(full_precision=full_precision)

    def to_dataframe(self):
        """A pandas DataFrame, one row per output time (and batch element).

        Columns: ``t`` (and ``batch``), ``loss``, ``entropy``, ``max_weight``,
        ``one_minus_max``, ``argmax``, ``w1..wn`` (weights) and ``a1..an`` (logits).
        Raises ``ModuleNotFoundError`` with an install hint when pandas is missing.
        """
        try:
            import pandas as pd
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(
                "to_dataframe() needs pandas, which is not installed; `pip install pandas`, or "
                "use to_numpy() / to_dict()", name=exc.name) from None
        arr = self.to_numpy()
        t = arr["times"]
        K = t.shape[0]
        cols = {}
        if self.batched:
            B = arr["loss"].shape[1]
            cols["t"] = np.repeat(t, B)
            cols["batch"] = np.tile(np.arange(B), K)
        else:
            cols["t"] = t
        for key in _SCALAR_FIELDS:
            cols[key] = arr[key].reshape(-1)
        n = arr["weights"].shape[-1]
        w = arr["weights"].reshape(-1, n)
        a = arr["a"].reshape(-1, n)
        # phi<i> (not w<i>: w is the logistic target) and a<i>, tokens counted from 0 as everywhere
        for i in range(n):
            cols[f"phi{i}"] = w[:, i]
        for i in range(n):
            cols[f"a{i}"] = a[:, i]
        return pd.DataFrame(cols)

    def plot(self, path=None, *, element=None, title=None):
        """Weights and entropy against $t$ (log axis; $t=0$ left out); returns the Figure.

        ``path``: also save a PNG there (atomically). ``element``: for a batch, the element
        whose weights are drawn (default 0); the entropy panel shows every element.
        The figure is not registered with pyplot, so a notebook shows it once.
        """
        return plot_trajectory(self, path, element=element, title=title)

    def __repr__(self) -> str:
        s = self._sizes()
        times = self._field("times")
        K = len(times)
        span = f"t={_short(times[0])}..{_short(times[-1])}" if K else "no times"
        head = (f"{type(self).__name__}({s['what']}, {s['backend']}/{s['method']}, clock={s['clock']}, "
                f"{span} ({K} times)")
        if K == 0:
            return head + ")"
        if self.batched:
            arr = self.to_numpy()
            H = arr["entropy"][-1]
            H = H[np.isfinite(H)]  # NaN where the entropy is undefined (weights off the simplex)
            ent = f"{H.min():.4g}..{H.max():.4g}" if H.size else "undefined"
            tail = (f", final entropy {ent}, "
                    f"steps {int(np.min(s['n_steps']))}..{int(np.max(s['n_steps']))})")
        else:
            tail = (f", final loss={_short(self._field('loss')[-1])}, "
                    f"entropy={_short(self._field('entropy')[-1])}, "
                    f"argmax={self._field('argmax')[-1]}, steps={s['n_steps']}")
            if getattr(self, "frozen_at", None) is not None:
                tail += f", frozen at t={_short(self.frozen_at)}"
            tail += ")"
        return head + tail

    def _repr_pretty_(self, printer, cycle):  # IPython
        printer.text(repr(self))


class BatchTrajectory(TrajectoryAPI, Mapping):
    """The result of :func:`numerics.integrate_batch`: tensors on the integration device.

    Attributes (and, for code written against the earlier dict, the same keys:
    ``result["V"]``, ``result.keys()``): ``times`` (K,), ``V`` (K, B, d, n), ``a`` /
    ``weights`` (K, B, n), ``loss`` / ``entropy`` / ``max_weight`` / ``one_minus_max``
    (K, B), ``argmax`` (K, B) int64, ``n_steps`` / ``n_rejected`` (B,) int64, ``frozen_at``
    (B,) (NaN where not frozen), ``clock``, ``method``, ``rtol``, ``atol``, ``wall_time``.
    :meth:`element` gives one element as a :class:`~numerics.Trajectory`.
    """

    batched = True
    _KEYS = FIELDS + ("n_steps", "n_rejected", "frozen_at", "clock", "method", "rtol", "atol",
                      "wall_time")

    def __init__(self, *, problem=None, **fields):
        missing = set(self._KEYS) - set(fields)
        extra = set(fields) - set(self._KEYS)
        if missing or extra:
            raise TypeError(f"BatchTrajectory fields: missing {sorted(missing)}, unexpected {sorted(extra)}")
        self.__dict__.update(fields)
        self.problem = problem
        self.backend = "torch"

    # Mapping (backward compatible with the dict integrate_batch used to return)
    def __getitem__(self, key):
        if key not in self._KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(self._KEYS)

    def __len__(self):
        return len(self._KEYS)

    __eq__ = object.__eq__  # identity, not Mapping's value comparison of tensors
    __hash__ = object.__hash__

    @property
    def batch_size(self) -> int:
        return int(self.loss.shape[1])

    def _field(self, key):
        return getattr(self, key)

    def _sizes(self):
        B, d, n = (int(x) for x in self.V.shape[1:])
        return {"what": f"B={B}, n={n}, d={d}", "backend": f"torch {str(self.V.dtype).replace('torch.', '')} "
                f"{self.V.device}", "method": self.method.upper(), "clock": self.clock,
                "n_steps": self.n_steps.cpu().numpy()}

    def element(self, i: int):
        """Batch element ``i`` as a :class:`~numerics.Trajectory` (Python floats)."""
        B = self.batch_size
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not -B <= int(i) < B:
            raise InvalidArgument(f"element={i!r} is not allowed; expected an integer in [0, {B})")
        i = int(i) % B
        col = lambda key: getattr(self, key)[:, i].detach().cpu().tolist()
        Vi = self.V[:, i].detach().cpu().numpy().astype(np.float64)  # one array, as the numpy backend's
        fz = float(self.frozen_at[i])
        traj = Trajectory(times=self.times.detach().cpu().tolist(), a=col("a"), weights=col("weights"),
                          loss=col("loss"), entropy=col("entropy"), max_weight=col("max_weight"),
                          argmax=[int(k) for k in col("argmax")], one_minus_max=col("one_minus_max"),
                          V=Vi, backend="torch", clock=self.clock, method=self.method.upper(),
                          n_steps=int(self.n_steps[i]), n_rejected=int(self.n_rejected[i]),
                          rtol=self.rtol, atol=self.atol, frozen_at=fz if fz == fz else None)
        return traj

    def to_json_dict(self, full_precision: bool = False) -> dict:
        """JSON-ready dict: the per-time fields as nested lists (K, B, ...), and ``meta``."""
        j = lambda x: _jsonable(x, full_precision, None)
        out = {key: j(getattr(self, key)) for key in FIELDS}
        out["meta"] = {"backend": "torch", "clock": self.clock, "method": self.method,
                       "rtol": self.rtol, "atol": self.atol, "n_steps": j(self.n_steps),
                       "n_rejected": j(self.n_rejected), "frozen_at": j(self.frozen_at),
                       "wall_time_s": round(float(self.wall_time), 3), "versions": versions()}
        return out


def _jsonable(x, full_precision: bool, dps: int | None):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_jsonable(v, full_precision, dps) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist(), full_precision, dps)
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            return None
        if full_precision:
            return mpmath.nstr(x, dps or mpmath.mp.dps, min_fixed=-4, max_fixed=16)
        return float(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, str):
        return x
    if hasattr(x, "tolist"):  # a torch tensor
        return _jsonable(x.tolist(), full_precision, dps)
    return x


@dataclass(repr=False)
class Trajectory(TrajectoryAPI):
    """States and metrics at the output times; every list is aligned with :attr:`times`.

    ``a[k]`` (n numbers), ``weights[k]`` ($\\varphi(a)$), ``loss[k]``, ``entropy[k]``,
    ``max_weight[k]``, ``argmax[k]`` (int), ``one_minus_max[k]`` ($1-\\max p$, see
    :mod:`numerics.metrics`), ``V[k]`` (d rows of n). Numbers are ``mpf`` (rounded to
    ``dps`` digits) for the mpmath backend and Python floats otherwise; ``V`` of the float64 backends
    (numpy, torch, taylor at float64, gradient descent with numpy) is one float64 array ``(K, d, n)``, which
    holds a large run in its own bytes (nested lists of floats would take about four times as many). ``tau[k]`` holds
    the internal clock for ``clock='tau'``; ``u[k]`` the projections $V^\\top w$ for the
    reduced system (where ``V`` is ``None``).

    ``frozen_at`` is the time from which the state was frozen by the tail-bound rule
    (``freeze_bound`` bounds the distance, in the Euclidean norm of $(V,a)$, from the
    frozen state to the true state at every later time); ``None`` when not frozen.

    Notebook interface (:mod:`numerics.integrate._trajectory`): a short ``repr``, :meth:`to_numpy`,
    :meth:`to_dict`, :meth:`to_dataframe` (pandas), :meth:`plot`; shared with
    :class:`BatchTrajectory`.
    """

    times: list
    a: list
    weights: list
    loss: list
    entropy: list
    max_weight: list
    argmax: list
    one_minus_max: list
    V: Any
    backend: str
    clock: str
    method: str
    n_steps: int
    n_rejected: int = 0
    n_rhs: int = 0
    dps: int | None = None
    rtol: float | None = None
    atol: float | None = None
    tau: list | None = None
    u: list | None = None
    frozen_at: Any = None
    freeze_bound: Any = None
    problem: Any = None
    notes: list = field(default_factory=list)
    wall_time: float = 0.0

    def _field(self, key):
        return getattr(self, key)

    def _optional_fields(self):
        return tuple(k for k in ("tau", "u") if getattr(self, k) is not None)

    def _sizes(self):
        n = len(self.a[0]) if self.a else 0
        d = len(self.V[0]) if self.V is not None and len(self.V) else None
        what = f"n={n}" + (f", d={d}" if d is not None else ", reduced")
        if self.problem is not None:
            what = f"{self.problem.loss}/{self.problem.link}, " + what
        backend = self.backend + (f" dps={self.dps}" if self.dps else "")
        return {"what": what, "backend": backend, "method": self.method, "clock": self.clock,
                "n_steps": self.n_steps}

    def to_dict(self, full_precision: bool = True) -> dict:
        """JSON-ready dict (as :meth:`to_json_dict`): mpmath numbers as decimal strings with
        ``dps`` digits (``full_precision=False``: floats)."""
        return self.to_json_dict(full_precision=full_precision)

    def save(self, path, **kw):
        """Every array in one binary ``.npz`` at ``path`` (:func:`numerics.save_trajectory`); returns the path."""
        return save_trajectory(self, path, **kw)

    def to_json_dict(self, full_precision: bool = True, include_V: bool = True) -> dict:
        """A JSON-ready dict: decimal strings with ``dps`` digits for mpmath numbers
        (``full_precision=False`` gives floats), floats otherwise, ``null`` for NaN.

        ``include_V=False`` leaves out ``V`` ($d\times n$ numbers at each output time, the bulk of a large
        run: 954 MB of JSON for n = d = 1024 at 41 times) and says so in ``meta.left_out``; the other
        fields are $O(n)$ per time. :func:`numerics.save_trajectory` keeps every array in binary."""
        j = lambda x: _jsonable(x, full_precision, self.dps)
        out = {"times": j(self.times)}
        for key in ("a", "weights", "loss", "entropy", "max_weight", "argmax", "one_minus_max", "V"):
            if key == "V" and not include_V and self.V is not None:
                continue
            out[key] = j(getattr(self, key))
        if self.tau is not None:
            out["tau"] = j(self.tau)
        if self.u is not None:
            out["u"] = j(self.u)
        out["meta"] = {
            "backend": self.backend, "clock": self.clock, "method": self.method, "dps": self.dps,
            "rtol": self.rtol, "atol": self.atol, "n_steps": self.n_steps,
            "n_rejected": self.n_rejected, "n_rhs": self.n_rhs, "frozen_at": j(self.frozen_at),
            "freeze_bound": j(self.freeze_bound), "notes": list(self.notes),
            "wall_time_s": round(self.wall_time, 3), "versions": versions(),
        }
        if "V" not in out:
            shape = np.shape(self.V)
            out["meta"]["left_out"] = {"V": f"{shape[1]} x {shape[2]} at each of {shape[0]} output times "
                                            "(simulate --full-json, or --out FILE.npz for every array in binary)"}
        if self.problem is not None:
            out["problem"] = self.problem.to_json_dict()
        return out
