"""``python -m skimsketch.cli``: the ``skimsketch`` command."""

import sys

from .main import main

sys.exit(main())
