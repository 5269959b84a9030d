"""`python -m minuscule` runs the command line."""

import sys

from minuscule.cli import main

sys.exit(main())
