# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON fixtures in tests/unit/fixtures (documented example responses, the SDK field tree, signing vectors)."""

from __future__ import annotations

import json
import os

FIXTURES = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures"))


def load(name):
    """Parse one fixture file."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return json.load(handle)
