# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""galaxy.yml is the one place the collection's version is set; the copy modules carry (AnsiballZ ships no galaxy.yml) must match."""

from __future__ import annotations

import os

import yaml

from ansible_collections.modelarts.training.plugins.module_utils.service import transport as client

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))


def test_module_utils_version_is_galaxys():
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        version = yaml.safe_load(handle)["version"]
    assert client.COLLECTION_VERSION == version
    assert client.USER_AGENT.startswith("modelarts.training/%s " % version)
