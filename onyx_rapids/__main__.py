"""``python -m onyx_rapids ...``: the ``onyx-rapids`` command."""

import sys

from .cli import main

sys.exit(main())
