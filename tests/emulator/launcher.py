# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deprecated: the launcher is ``modelarts_emulator.launcher`` in the emulator package (emulator/).

Kept so that ``from launcher import running_emulator`` (with tests/emulator on sys.path) still
works; new code imports ``modelarts_emulator.launcher`` or uses the pytest plugin's fixtures.
"""

import os
import sys

_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "emulator", "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)

# pylint: disable=wrong-import-position,unused-import
from modelarts_emulator.launcher import (  # noqa: E402,F401
    READY_PREFIX,
    EmulatorCredentials,
    EmulatorProcess,
    running_emulator,
    server_command,
    server_env,
    start_emulator,
    wait_until,
)
from modelarts_emulator.pytest_plugin import emulator_fixture  # noqa: E402,F401
