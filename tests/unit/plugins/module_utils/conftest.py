# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by the module_utils unit tests: the documented example responses, freshly parsed."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fixture_files import load


@pytest.fixture
def v2():
    """The richest edition's v2 example response."""
    return load("v2_example_rst.json")


@pytest.fixture
def v1():
    """The v1 example response (its broken spec_code repaired)."""
    return load("v1_example.json")
