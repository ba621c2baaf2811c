r"""softpolar.atlas: certified basin atlases, which token wins over whole boxes of initializations [D].

* :mod:`.engine`: slices, the adaptive quadtree, scheduling (dask), the journal, the outputs;
* :mod:`._cmd`: the ``softpolar atlas`` subcommand;
* :mod:`.claims`: the ATLAS claim of ``softpolar verify``.

The box engine and the independent atlas checker live in :mod:`numerics.validated`.

``softpolar.atlas(spec, out, ...)`` is :func:`run_atlas` (the module is callable, so the
public name ``softpolar.atlas`` keeps working as a function).
"""
from __future__ import annotations

import sys
import types

from .engine import (ADAPTIVE_ENGINE, BASELINE_ENGINE, DEFAULT_ENGINE, FAST_ENGINE, MARKER, PARENT_ENGINE, PRESETS,
                      Slice, compare_float, float_map, load_slice, run_atlas, width_scan)

__all__ = ["run_atlas", "load_slice", "Slice", "PRESETS", "float_map", "compare_float", "width_scan"]
# the box engine's settings (``run_atlas(engine=...)``) and the name of an atlas folder's marker file
__all__ += ["ADAPTIVE_ENGINE", "BASELINE_ENGINE", "DEFAULT_ENGINE", "FAST_ENGINE", "PARENT_ENGINE", "MARKER"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return run_atlas(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
