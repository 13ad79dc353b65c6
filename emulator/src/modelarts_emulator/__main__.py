# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``python -m modelarts_emulator``: the same as the ``modelarts-emulator`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m modelarts_emulator"))
