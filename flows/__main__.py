"""``python -m flows ...`` is the same as ``equilens ...``."""

import sys

from flows.cli import main

sys.exit(main())
