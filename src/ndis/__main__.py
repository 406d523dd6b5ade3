"""`python -m ndis ...`: the same command line as the `ndis` script."""

import sys

from .cli import main

sys.exit(main())
