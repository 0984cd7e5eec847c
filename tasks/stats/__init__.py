"""The statistics engine: intervals and tests over prompt clusters, and the gap a run can detect.

- :mod:`~equilens.tasks.stats.inference`: percentile bootstrap over prompts, paired permutation tests,
  the paired gap test, Holm's adjustment (its names are re-exported here).
- :mod:`~equilens.tasks.stats.resampling`: parity statistics as reweightings of one sorted grid.
- :mod:`~equilens.tasks.stats.omnibus`: one permutation test across every group of an attribute.
- :mod:`~equilens.tasks.stats.detectable_gap` and :mod:`~equilens.tasks.stats.planted`: the smallest gap a
  run detects at its own rule, by planting gaps of known size.
- :mod:`~equilens.tasks.stats.kernels`: counter-based random words and chunked compiled loops.
"""

from equilens.tasks.stats.inference import *  # noqa: F403 - its __all__ is the package's surface
from equilens.tasks.stats.inference import __all__  # noqa: F401
