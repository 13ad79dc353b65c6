#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ModelArts + IAM emulator: ``modelarts-emulator`` run from a checkout, without installing the package.

    python3 tests/emulator/server.py --port 8443 --tls-dir ~/.modelarts-emulator/tls

prints ``modelarts-emulator listening on <URL>`` once it accepts connections. The emulator is the
Python package in emulator/ (``pip install ./emulator``); see docs/emulator.md.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "emulator", "src"))

from modelarts_emulator.cli import main  # noqa: E402  pylint: disable=wrong-import-position

if __name__ == "__main__":
    sys.exit(main(prog="server.py"))
