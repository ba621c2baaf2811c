r"""numerics.integrate: the integrators of the value-softmax flow, one module per engine.

* :mod:`._simulate`: :func:`simulate`, the one entry point (picks the engine);
* :mod:`._common`: output grids, tolerances, the loss-descent check, :class:`IntegrationError`;
* :mod:`._trajectory`: :class:`Trajectory` and :class:`BatchTrajectory` (one notebook interface);
* :mod:`._numpy` (DOP853 in float64), :mod:`._mpmath` (Gragg-Bulirsch-Stoer in multiprecision,
  :mod:`._gbs`), :mod:`._torch` (batched DOP853, CPU or CUDA), :mod:`._taylor` (heyoka's Taylor
  method, with its SymPy bridge :mod:`._taylor_sympy`);
* :mod:`._clock`: the reduced logistic system in its internal clocks; :mod:`._freeze`: the
  tail-bound freeze rule; :mod:`._gd`: discrete gradient descent.

The public names are re-exported by :mod:`numerics`; import them from there.
"""
