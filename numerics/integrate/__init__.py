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

# the door for the other numerics wings (numerics.optim builds its engines on these parts) and for the tests of
# the engines' parts (the descent check, the freeze rule, the tolerances); users import the public names from numerics
from ._common import MAX_DPS, IntegrationError, check_descent, check_dps, exp_neg_T
from ._freeze import freeze_rule, weights_sum_to_one
from ._gbs import gbs_solve
from ._gd import FINITE_BLOCK, default_record
from ._mpmath import dell_mpmath, default_tol_mp, make_system_mp
from ._numpy import DEFAULT_RTOL, RTOL_MIN, NonFinite, all_finite, dop853_solve
from ._system import GUARD_DIGITS, assemble_mpmath, assemble_numpy
from ._simulate import ENGINES, resolve_backend
from ._torch import default_rtol, rtol_floor
from .taylor import clear_cache as clear_taylor_cache
from .taylor_sympy import TranslationError, flow_system, smooth_reason

__all__ = ["DEFAULT_RTOL", "ENGINES", "FINITE_BLOCK", "GUARD_DIGITS", "IntegrationError", "MAX_DPS", "NonFinite",
           "RTOL_MIN", "TranslationError", "all_finite", "assemble_mpmath", "assemble_numpy", "check_descent",
           "check_dps", "clear_taylor_cache", "default_record", "default_rtol", "default_tol_mp", "dell_mpmath",
           "dop853_solve", "exp_neg_T", "flow_system", "freeze_rule", "gbs_solve", "make_system_mp",
           "resolve_backend", "rtol_floor", "smooth_reason", "weights_sum_to_one"]
