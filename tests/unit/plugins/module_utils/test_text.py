# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""text.py: one bounded, printable, secret-free line for every message."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ansible_collections.modelarts.training.plugins.module_utils import text
from ansible_collections.modelarts.training.plugins.module_utils.text import (
    MASK,
    Secrets,
    describe_typed,
    excerpt,
    inert,
    label,
    name_key,
    printable,
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


# -- issue 20, item 3: mask first, then cut; every escaped form of a secret -------------------------

ECHOED = 'PW-echo "q\\u0/te" \u00e9+%3e x&<y>\'\U0001f600'


def _forms(secret):
    import html  # pylint: disable=import-outside-toplevel
    import json  # pylint: disable=import-outside-toplevel
    from urllib.parse import quote, quote_plus  # pylint: disable=import-outside-toplevel

    once = json.dumps(secret)
    return [
        secret,
        once,
        json.dumps(secret, ensure_ascii=False),
        json.dumps(once),
        repr(secret),
        ascii(secret),
        repr(secret.encode("utf-8")),
        repr(once),
        quote(secret),
        quote(secret, safe=""),
        quote_plus(secret),
        re.sub("%[0-9A-F]{2}", lambda match: match.group().lower(), quote(secret)),
        quote(quote(secret, safe=""), safe=""),
        quote_plus(once),
        html.escape(secret),
        html.escape(once),
        html.escape(repr(once)),
    ]


@pytest.mark.parametrize("form", range(17))
def test_redact_masks_a_secret_in_every_form_it_is_echoed_in(form):
    shown = _forms(ECHOED)[form]
    text = redact("before %s after" % shown, ["unrelated", ECHOED])
    assert text.startswith("before ") and text.endswith(" after") and text.count(MASK) == 1, (shown, text)
    left = text[len("before ") : -len(" after")].replace(MASK, "")
    assert not any(piece in left for piece in ("PW", "echo", "u0", "te", "3e", "y", "\u00e9", "%C3")), (shown, text)


def test_excerpt_masks_before_it_cuts():
    """A secret across the cut was shown in part: the old excerpt cut the body at 640 bytes first, then masked."""
    token = "MII" + "Qx7/+Zk9" * 40
    for pad in (0, 300, 500, 600, 630, 700):
        body = b"\n" * pad + b"the request was:\nGET /v2/p/training-jobs/j\r\nx-auth-token: " + token.encode() + b"\r\n"
        text = excerpt(body, [token])
        assert "Qx7/" not in text and "MII" not in text and len(text) <= 163, (pad, text)
    long_token = "ST" + "a1B2c3D4" * 300  # a real STS security token is 1-3 KB
    text = excerpt(b"X-Security-Token: " + long_token.encode(), [long_token])
    assert text == "X-Security-Token: %s" % MASK


def test_excerpt_reads_a_bounded_start_of_a_huge_body():
    secret = "/+=secret"
    text = excerpt(b"\\" * (8 * 1024 * 1024) + secret.encode(), [secret])
    assert len(text) == 163 and secret not in text


def test_label_masks_before_it_cuts():
    secret = "sk-" + "z" * 200
    assert label("prefix " + secret, 40, [secret]) == "prefix " + MASK
    assert "zzzz" not in label("x" * 30 + secret, 40, [secret])


@pytest.mark.parametrize(
    "url",
    ["http://user:pa/ss@proxy:3128", "http://user:p@ss@proxy:3128", "http://user:p#ss@proxy:3128", "http://user:p?s/s@proxy", "socks5h://u:p:w@proxy:1080"],
)
def test_redact_masks_userinfo_up_to_the_last_at(url):
    text = redact("Cannot connect to proxy %s: refused" % url)
    assert text == "Cannot connect to proxy %s://%s@%s: refused" % (url.split("://")[0], MASK, url.rpartition("@")[2])
    assert redact('{"proxy": "%s"}' % url.replace("/", "\\/")).count(MASK) == 1


def test_printable_writes_control_characters_out_and_cuts_nothing():
    assert printable("plain name") == "plain name"
    assert printable("a\nb\r\x1b[2K\u2028c") == "a\\nb\\r\\x1b[2K\\u2028c"
    assert printable("x" * 5000) == "x" * 5000
    assert printable(None) == "None"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("resnet50-{epoch}", "resnet50-{epoch}"),
        ("{{ lookup('pipe', 'id') }}", "{ { lookup('pipe', 'id') }}"),
        ("a{%raw%}b{#c#}", "a{ %raw%}b{ #c#}"),
        ("{{{x}}}", "{ { {x}}}"),
        ("#jinja2:variable_start_string:'[['\n[[ x ]]", "# jinja2:variable_start_string:'[['\\n[[ x ]]"),
    ],
)
def test_inert_text_opens_no_jinja_delimiter(text, expected):
    assert inert(text) == expected
    assert not re.search(r"\{[{%#]", inert(text)) and not inert(text).startswith("#jinja2:")


def test_secrets_built_once_mask_as_the_values_do():
    secrets = Secrets(["s3cr/et", "", None, "s3cr/et", 42])
    assert tuple(secrets) == ("s3cr/et", "42") and hash(secrets) == hash(secrets)
    line = "token s3cr%2Fet and 42 and s3cr\\/et"
    assert redact(line, secrets) == redact(line, ["s3cr/et", 42]) == "token ******** and ******** and ********"
    assert label(line, 200, secrets) == label(line, 200, ["s3cr/et", "42"])


def _each(value, secrets):
    """What redact_value must give: redact() on every string of ``value``."""
    if isinstance(value, str):
        return text.redact(value, secrets)
    if isinstance(value, dict):
        return dict((key, _each(entry, secrets)) for key, entry in value.items())
    if isinstance(value, list):
        return [_each(entry, secrets) for entry in value]
    return value


_PIECES = st.sampled_from(
    ["plain", "ssh://ma-user@host-1.example", "https://u:p@h/x", "//", "@", "\\/\\/", "\n", '"', "\\", "s3cr3t", "S3CR3T", "s3cr%33t", "é", "{{ x }}"]
)
_STRINGS = st.lists(_PIECES, max_size=4).map("".join)
_VALUES = st.recursive(
    st.one_of(_STRINGS, st.integers(), st.none(), st.booleans()),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_STRINGS, children, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(value=_VALUES, secrets=st.sampled_from([(), ("s3cr3t",), ("s3cr3t", "ma-user"), ('a"b',)]))
# Found by hypothesis in a CI run: "\/\/@" (a URL start as JSON escapes it) is "\\/\\/@" in the JSON text.
@example(value="\\/\\/@", secrets=())
@example(value={"k": ["x\\/\\/u:p@h", "plain"]}, secrets=())
def test_redact_value_masks_as_redact_on_every_string_does(value, secrets):
    """The JSON-text look-over is only a shortcut: the same result as redacting each string, whatever the value holds."""
    assert text.redact_value(value, secrets) == _each(value, secrets)


def test_redact_value_returns_a_clean_value_as_it_is():
    value = {"a": ["b", {"c": "d"}], "url": "obs://bucket/path"}
    assert text.redact_value(value, ("s3cr3t",)) is value
