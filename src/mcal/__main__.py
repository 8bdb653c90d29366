"""``python -m mcal``: the command line."""

import sys

from mcal.cli import main

sys.exit(main())
