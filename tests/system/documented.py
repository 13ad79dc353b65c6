# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What docs/troubleshooting.md quotes: a message the code printed must be one of its quotations."""

import os
import re

from conftest import ROOT

TROUBLESHOOTING = os.path.join(ROOT, "docs", "troubleshooting.md")


def documented_pattern(documented):
    """A message docs/troubleshooting.md quotes, as a regular expression: ``...`` and ``<placeholder>`` match anything."""
    parts = re.split(r"(\.\.\.|<[a-z0-9 ]+>)", documented)
    return re.compile("".join(".*?" if index % 2 else re.escape(part) for index, part in enumerate(parts)))


def assert_documented(message):
    """docs/troubleshooting.md quotes ``message`` as the code printed it (a quotation may leave parts out as ``...``)."""
    with open(TROUBLESHOOTING) as handle:
        quoted = [text for text in re.findall(r"`([^`\n]+)`", handle.read()) if len(text) > 40]
    assert any(documented_pattern(text).search(message) for text in quoted), "docs/troubleshooting.md does not quote: %s" % message
