"""`python -m ndis ...`: the same command line as the `ndis` script."""

import sys

from ndis.cli import main

sys.exit(main())
