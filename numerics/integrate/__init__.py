r"""numerics.integrate: the integrators of the value-softmax flow, one module per engine.

* :mod:`._simulate`: :func:`simulate`, the one entry point (picks the engine);
* :mod:`._common`: output grids, tolerances, the loss-descent check, :class:`IntegrationError`;
* :mod:`._trajectory`: :class:`Trajectory` and :class:`BatchTrajectory` (one notebook interface);
* :mod:`._numpy` (DOP853 in float64), :mod:`._mpmath` (Gragg-Bulirsch-Stoer in multiprecision,
  :mod:`._gbs`), :mod:`._torch` (batched DOP853, CPU or CUDA), :mod:`.taylor` (heyoka's Taylor
  method, with its SymPy bridge :mod:`.taylor_sympy`);
* :mod:`._clock`: the reduced logistic system in its internal clocks; :mod:`._freeze`: the
  tail-bound freeze rule; :mod:`._gd`: discrete gradient descent.

The public names are re-exported by :mod:`numerics`; import them from there.
"""

# the door for the other numerics wings (numerics.optim builds its engines on these parts); users import
# the public names from numerics
from ._common import MAX_DPS, IntegrationError, check_dps
from ._gbs import gbs_solve
from ._gd import default_record
from ._mpmath import default_tol_mp
from ._numpy import DEFAULT_RTOL, RTOL_MIN, NonFinite, dop853_solve
from ._system import GUARD_DIGITS, assemble_mpmath, assemble_numpy
from ._simulate import ENGINES
from .taylor import clear_cache as clear_taylor_cache
from .taylor_sympy import TranslationError, flow_system, smooth_reason

__all__ = ["DEFAULT_RTOL", "ENGINES", "GUARD_DIGITS", "IntegrationError", "MAX_DPS", "NonFinite", "RTOL_MIN",
           "TranslationError", "assemble_mpmath", "assemble_numpy", "check_dps", "clear_taylor_cache", "default_record",
           "default_tol_mp",
           "dop853_solve", "flow_system", "gbs_solve", "smooth_reason"]
