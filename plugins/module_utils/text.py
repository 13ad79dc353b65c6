# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every text helper of the collection: messages stay one line, bounded, and free of secrets.

* :func:`redact` masks secret values and URL user-info; :data:`MASK` is what replaces them;
* :func:`label` renders an id or a name (the user's or the service's input) as one bounded line;
* :func:`excerpt` quotes a response body; :func:`describe_value` describes a JSON value (containers
  by size, never printed); :func:`truncate` cuts a text that is already safe;
* :func:`name_key` names a job by its key (a v2 id, a v1 ``('v1', job_id, version_id)`` or a search
  result ``('search', n)``): the one way a message names a job before its document is known.
"""

from __future__ import annotations

import re

MASK = "********"
EXCERPT_LENGTH = 160
LABEL_LENGTH = 120
VALUE_CHARS = 60

_USERINFO = re.compile(r"(?<=//)[^/@\s]+@")
_WHITESPACE = re.compile(r"\s+")
_JSON_TYPE_NAMES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (tuple, "array"), (dict, "object"))


def redact(text, secrets=()):
    """Mask each non-empty secret value and any ``user:password@`` in URLs inside ``text``."""
    text = _USERINFO.sub(MASK + "@", str(text))
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


def label(value, length=LABEL_LENGTH):
    """``value`` as one bounded, printable line for messages: control characters escaped, long values cut.

    A job id is the user's (or another system's) input: a newline in it must not forge a line of
    Ansible's output, and a 5,000-character id must not make a 5,000-character message.
    """
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(value))
    return text if len(text) <= length else text[:length] + "..."


def excerpt(body, secrets=(), length=EXCERPT_LENGTH):
    """A one-line, bounded, redacted excerpt of a response body for error messages."""
    if isinstance(body, bytes):
        body = body[: length * 4].decode("utf-8", "replace")
    text = _WHITESPACE.sub(" ", redact(body, secrets)).strip()
    if len(text) > length:
        text = text[:length] + "..."
    return text


def truncate(text, limit):
    """``text`` cut to ``limit`` characters, the last three of them ``...`` when it was longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_type_name(value):
    """Return the JSON type name of a Python value (``null``, ``string``, ...)."""
    if value is None:
        return "null"
    for python_type, name in _JSON_TYPE_NAMES:
        if isinstance(value, python_type):
            return name
    return type(value).__name__


def describe_value(value, limit=VALUE_CHARS):
    """Return a short, bounded description of a JSON value for error messages.

    Containers are described rather than printed: their repr can be huge or nested deeper
    than the recursion limit.  Very large integers are described by size because ``repr``
    of an int over 4300 digits raises ``ValueError`` on recent Pythons.
    """
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int):
        return repr(value) if value.bit_length() <= 128 else "an integer of %d bits" % value.bit_length()
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return "%s... (%d characters)" % (repr(value[:limit]), len(value))
    if isinstance(value, dict):
        return "an object with %d key%s" % (len(value), "" if len(value) == 1 else "s")
    if isinstance(value, (list, tuple)):
        return "an array of %d item%s" % (len(value), "" if len(value) == 1 else "s")
    return "a value of type %s" % type(value).__name__


def describe_typed(value):
    """A value with its JSON type, for "expected X, got ..." messages: ``string 'abc'``, ``an object with 2 keys``."""
    if value is None or isinstance(value, (dict, list)):
        return describe_value(value)
    return "%s %s" % (json_type_name(value), describe_value(value))


def name_key(key):
    """Name a job by its key, for messages: ``3f7a...``, ``v1 job 10 version 2`` or ``search result 3``."""
    if isinstance(key, tuple):
        if len(key) == 3 and key[0] == "v1" and all(isinstance(part, int) for part in key[1:]):
            return "v1 job %s version %s" % (label(key[1]), label(key[2]))
        if len(key) == 2 and key[0] == "search":
            return "search result %s" % (label(key[1]),)
        return "/".join(label(part) for part in key)
    return label(key)
