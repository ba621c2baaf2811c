r"""Trajectories in NumPy's ``.npz`` format: every array in binary, in about its own bytes.

``simulate --out FILE.npz`` (and :func:`save_trajectory`) writes one uncompressed ``.npz`` (a zip of
``.npy`` members) holding

* the per-output-time arrays of :meth:`numerics.Trajectory.to_numpy`, output-time axis first:
  ``times`` (K,), ``a`` / ``weights`` (K, n), ``loss`` / ``entropy`` / ``max_weight`` /
  ``one_minus_max`` (K,), ``argmax`` (K,) int64, ``V`` (K, d, n), and ``tau`` / ``u`` where the run
  has them: float64 (mpmath numbers are rounded once to float64; the JSON output keeps their digits);
* ``meta_json``: the JSON ``meta`` object (backend, clock, method, steps, notes, versions, argv, seed);
* ``problem_json``: the initial condition (:meth:`numerics.Problem.to_json_dict`). Its arrays are kept in
  the JSON text when the inputs are exact (decimal strings, so they stay exact), else they are binary
  members ``problem_V``, ``problem_a``, ``problem_target`` (and ``problem_X``), and ``problem_json``
  names them;
* ``format`` (``softpolar-trajectory``) and ``softpolar_output`` (what wrote it), 0-d text arrays: the
  file is recognised as softpolar's own (:func:`numerics.io.softpolar_output`), so a later run may
  replace it.

Why ``.npz``: it needs nothing beyond numpy, ``numpy.load(path)`` opens it with ``allow_pickle=False``
(no code runs on reading), and numpy writes each member in chunks from the array itself, so writing
costs no second copy: the file is the arrays' bytes plus a few kB of headers and JSON, where the JSON
with every ``V`` of ``simulate --seed 1 --n 1024 --d 1024 --loss logistic --t-end 1e6`` was 954 MB (issue 39;
measured in docs/cli.md: 353 MB, 1.02x the arrays). HDF5 or zarr would add a dependency for no gain here: one write,
one read, no partial reads needed.

The file is written atomically (a temporary file in the same folder, then renamed): an interrupted
run leaves no half-written file.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from theorems import InvalidArgument

from ..io import OWN_KEY, npz_own_output, write_atomic  # noqa: F401 - npz_own_output: the reader side

#: the ``format`` member of a softpolar trajectory file
NPZ_FORMAT = "softpolar-trajectory"
#: the per-output-time arrays a trajectory file may hold, in this order
ARRAYS = ("times", "a", "weights", "loss", "entropy", "max_weight", "argmax", "one_minus_max", "V", "tau", "u")
_PROBLEM_ARRAYS = ("V", "a", "target", "X")


def _arrays(traj) -> dict:
    """The per-time arrays of ``traj``, without a second copy of ``V`` where it is already float64."""
    out, rounded = {}, None
    for key in ARRAYS:
        value = getattr(traj, key, None)
        if value is None:
            continue
        if hasattr(value, "detach"):  # a torch tensor
            value = value.detach().cpu().numpy()
        if isinstance(value, np.ndarray) and value.dtype == np.float64 and key != "argmax":
            out[key] = value  # written by numpy in chunks from the array itself, not copied
            continue
        if rounded is None:
            rounded = traj.to_numpy()  # mpf -> float64 once (the JSON output keeps the digits)
        out[key] = rounded[key]
    return out


def _problem_members(problem) -> dict:
    if problem is None:
        return {"problem_json": np.array("null")}
    if problem.has_exact_inputs:
        return {"problem_json": np.array(json.dumps(problem.to_json_dict()))}
    head = {"loss": problem.loss, "link": problem.link, "arrays": {}}
    if problem.frozen:
        head["frozen"] = list(problem.frozen)
    out = {}
    for name in _PROBLEM_ARRAYS:
        value = getattr(problem, name)
        if value is not None:
            out[f"problem_{name}"] = np.asarray(value, dtype=np.float64)
            head["arrays"][name] = f"problem_{name}"
    out["problem_json"] = np.array(json.dumps(head))
    return out


def save_trajectory(traj, path, *, meta: dict | None = None, what: str = "simulate", fsync: bool = False) -> Path:
    """Write ``traj`` (a :class:`numerics.Trajectory`) to ``path`` as an uncompressed ``.npz``, atomically.

    Args:
        traj: the trajectory (any backend; mpmath numbers are rounded to float64).
        path: the file; its name must end in ``.npz`` (``numpy.savez`` would otherwise append it).
        meta: entries added to the trajectory's own ``meta`` (argv, seed, ...); JSON-serializable.
        what: recorded as ``softpolar_output`` (which command wrote the file).
        fsync: flush to disk before the rename.

    Returns:
        ``path`` as a :class:`~pathlib.Path`. Read it back with :func:`load_trajectory`.
    """
    path = Path(path)
    if path.suffix.lower() != ".npz":
        raise InvalidArgument(f"path={str(path)!r} is not allowed; expected a file name ending in .npz")
    head = traj.to_json_dict(full_precision=True, include_V=False)
    record = dict(head["meta"])
    record.update(meta or {})
    members = {"format": np.array(NPZ_FORMAT), OWN_KEY: np.array(what),
               "meta_json": np.array(json.dumps(record)), **_problem_members(getattr(traj, "problem", None)),
               **_arrays(traj)}
    return write_atomic(path, lambda fh: np.savez(fh, **members), binary=True, fsync=fsync, parents=False)


def load_trajectory(path) -> dict:
    """Read a file of :func:`save_trajectory`: ``{name: array}`` for the per-time arrays, plus ``meta`` and
    ``problem`` (dicts; ``problem`` has its arrays as float64 arrays, or exact decimal strings).

    Raises :class:`~theorems.InvalidArgument` naming the path when it is not a softpolar trajectory file.
    """
    path = Path(path)
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise InvalidArgument(f"path={str(path)!r} is not allowed: {exc}; expected a .npz file that "
                              "softpolar simulate --out FILE.npz wrote") from None
    with z:
        if "format" not in z.files or str(z["format"]) != NPZ_FORMAT:
            raise InvalidArgument(f"path={str(path)!r} is not allowed; expected a .npz file with "
                                  f"format={NPZ_FORMAT!r} (softpolar simulate --out FILE.npz)")
        out = {key: z[key] for key in ARRAYS if key in z.files}
        out["meta"] = json.loads(str(z["meta_json"]))
        problem = json.loads(str(z["problem_json"]))
        if isinstance(problem, dict) and "arrays" in problem:
            for name, member in problem.pop("arrays").items():
                problem[name] = z[member]
        out["problem"] = problem
    return out
