# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""text.py: one bounded, printable, secret-free line for every message."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.text import (
    MASK,
    describe_typed,
    excerpt,
    label,
    name_key,
    redact,
    truncate,
)


def test_name_key():
    assert name_key("abc") == "abc"
    assert name_key(("x", "job", 7)) == "x/job/7"
    assert name_key(("v1", 10, 2)) == "v1 job 10 version 2"
    assert name_key(("search", 3)) == "search result 3"
    # Keys are user input: one bounded printable line, like every other job label in messages.
    assert name_key("a\nfatal: forged") == "a\\nfatal: forged"
    assert len(name_key("x" * 5000)) < 200
    assert name_key(("v1", "a\nb", 2)) == "v1/a\\nb/2", "v1 keys hold integers; anything else is named part by part"


@pytest.mark.parametrize("text,limit,expected", [("abc", 3, "abc"), ("abcdef", 5, "ab..."), ("", 3, "")])
def test_truncate(text, limit, expected):
    assert truncate(text, limit) == expected


def test_redact_masks_values_and_url_userinfo():
    assert redact("GET http://user:pw@proxy:3128 with sk-123", ["sk-123", ""]) == "GET http://%s@proxy:3128 with %s" % (MASK, MASK)


def test_excerpt_is_one_bounded_redacted_line():
    text = excerpt(b"<html>\n  secret-1 " + b"x" * 1000, ["secret-1"])
    assert "\n" not in text and MASK in text and len(text) <= 163


def test_label_and_describe_typed():
    assert label("a\tb") == "a\\tb" and label("y" * 500, 10) == "y" * 10 + "..."
    assert describe_typed("abc") == "string 'abc'" and describe_typed({"a": 1}) == "an object with 1 key"
    assert describe_typed(None) == "null" and describe_typed(True) == "boolean true"
