"""python -m tui runs the tracetui command line."""

import sys

from .cli import main

sys.exit(main())
