"""`python -m tui.cli`: the tracetui command line."""

import sys

from .commands import main

sys.exit(main())
