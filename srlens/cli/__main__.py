"""python -m srlens.cli: the same command line as the srlens script."""

import sys

from srlens.cli import main

sys.exit(main())
