"""``python -m memrecall``: the command line (the same as the ``memrecall`` script)."""

import sys

from memrecall.cli import main

sys.exit(main())
