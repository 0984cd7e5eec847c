"""``python -m equilens ...`` is the same as ``equilens ...``."""

import sys

from equilens.flows.cli import main

sys.exit(main())
