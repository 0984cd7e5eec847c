"""One lock for equilens' own first imports of scipy and of the libraries that import it.

They are imported where first used, so that a command that never computes a statistic starts fast.
scipy's compiled modules import one another in cycles (``scipy.stats`` imports ``scipy.spatial``,
which imports ``scipy.linalg``, ...), and nltk, sentence-transformers and great-expectations import
``scipy.stats``. Two threads that first import two of them at the same moment (a metric task that
loads nltk for ROUGE-L beside a statistic or an embedding model's load on another thread) can each
hold one module's import lock while waiting for the other's: Python then raises ``_DeadlockError``
in one of them, and that task fails. Every such import in equilens is made under :data:`IMPORTING`,
so no two of them run at once::

    with IMPORTING:
        from scipy.stats import norm

An import already made is a dictionary lookup under an uncontended lock.
"""

from __future__ import annotations

import threading

IMPORTING = threading.RLock()
"""Held while equilens imports scipy, nltk, sentence-transformers or great-expectations (re-entrant:
an import made under it may make another)."""
