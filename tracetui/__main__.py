"""`python -m tracetui` runs the tracetui command line, as the `tracetui` script and `python -m tui` do."""

import sys

from tui.cli import main

sys.exit(main())
