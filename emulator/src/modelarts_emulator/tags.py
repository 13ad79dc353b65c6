# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TMS tags of training jobs, workspaces, and the search's tag filter and create-time window.

The rules are the official SDK's (huaweicloudsdkmodelarts 3.1.219): ``JobSearches`` (``workspace_id``: ``0`` or
a 32-character id; ``tags``: at most 10 conditions, no key twice, no value twice under a key, and with tags the
``create_time`` filter is a window of at most 31 days, the last 31 days when not given), ``ListTagFilter`` (``key``:
1-128 characters, no leading or trailing space, letters, digits, spaces and ``_ . : = + - @``; ``values``: at most 10,
each 0-255 characters, the same plus ``/``; none, ``[]`` or only ``""`` = the key with any value) and ``TmsTag``
(a job's tag: ``key`` as above and not starting with ``_sys_``, ``value`` 0-255 characters).

Each check returns an error message naming the JSON path, or None.
"""

import re

MAX_TAG_FILTERS = 10
MAX_TAG_VALUES = 10
MAX_KEY_LENGTH = 128
MAX_VALUE_LENGTH = 255
WINDOW_DAYS = 31
WINDOW_MS = WINDOW_DAYS * 86400 * 1000
DEFAULT_WORKSPACE = "0"
_WORKSPACE = re.compile(r"^(0|[0-9A-Za-z]{32})$")
_KEY_PUNCTUATION = set(" _.:=+-@")
_VALUE_PUNCTUATION = _KEY_PUNCTUATION | {"/"}


def _bad_character(text, allowed):
    for char in text:
        if not (char.isalnum() or char in allowed):
            return char
    return None


def check_workspace(value, where="workspace_id"):
    """``0`` or 32 letters and digits."""
    if not isinstance(value, str) or not _WORKSPACE.match(value):
        return "%s must be 0 or a 32-character workspace id, got %r" % (where, value)
    return None


def check_key(key, where):
    """A tag key: 1-128 letters, digits, spaces and ``_ . : = + - @``, no leading or trailing space."""
    if not isinstance(key, str):
        return "%s must be a string, got %r" % (where, key)
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        return "%s must be 1-%d characters long, got %d" % (where, MAX_KEY_LENGTH, len(key))
    if key != key.strip(" "):
        return "%s must not begin or end with a space: %r" % (where, key)
    bad = _bad_character(key, _KEY_PUNCTUATION)
    if bad is not None:
        return "%s may hold only letters, digits, spaces and _ . : = + - @, not %r" % (where, bad)
    return None


def check_value(value, where):
    """A tag value: 0-255 letters, digits, spaces and ``_ . : / = + - @``."""
    if not isinstance(value, str):
        return "%s must be a string, got %r" % (where, value)
    if len(value) > MAX_VALUE_LENGTH:
        return "%s must be 0-%d characters long, got %d" % (where, MAX_VALUE_LENGTH, len(value))
    bad = _bad_character(value, _VALUE_PUNCTUATION)
    if bad is not None:
        return "%s may hold only letters, digits, spaces and _ . : / = + - @, not %r" % (where, bad)
    return None


def job_tags(spec, where):
    """A job's tags from a scenario: ``{key: value}`` or ``[{key, value}]``. Return ``{key: value}`` or raise ValueError."""
    if spec is None:
        return {}
    if isinstance(spec, dict):
        pairs = list(spec.items())
    elif isinstance(spec, list):
        pairs = []
        for index, item in enumerate(spec):
            if not isinstance(item, dict) or "key" not in item:
                raise ValueError("%s tags[%d] must be a mapping {key, value}" % (where, index))
            pairs.append((item["key"], item.get("value", "")))
    else:
        raise ValueError("%s tags must be a mapping {key: value} or a list of {key, value}" % where)
    tags = {}
    for key, value in pairs:
        value = "" if value is None else value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        problem = check_key(key, "%s tag key" % where) or check_value(value, "%s tag %r" % (where, key))
        if problem is None and key.startswith("_sys_"):
            problem = "%s tag key %r must not begin with _sys_ (reserved by TMS)" % (where, key)
        if problem is None and key in tags:
            problem = "%s tag key %r is given twice" % (where, key)
        if problem:
            raise ValueError(problem)
        tags[key] = value
    return tags


def parse_tag_filters(raw):
    """The search body's ``tags``: return ``[(key, values or None)]`` (None = any value) or an error message."""
    if raw is None:
        return [], None
    if not isinstance(raw, list):
        return None, "tags must be a list of {key, values}"
    if len(raw) > MAX_TAG_FILTERS:
        return None, "tags holds %d conditions; at most %d" % (len(raw), MAX_TAG_FILTERS)
    seen = set()
    conditions = []
    for index, item in enumerate(raw):
        where = "tags[%d]" % index
        if not isinstance(item, dict):
            return None, "%s must be an object {key, values}" % where
        key = item.get("key")
        problem = check_key(key, where + ".key")
        if problem:
            return None, problem
        if key in seen:
            return None, "%s.key %r is given twice" % (where, key)
        seen.add(key)
        values = item.get("values")
        if values is None:
            conditions.append((key, None))
            continue
        if not isinstance(values, list):
            return None, "%s.values must be a list of strings" % where
        if len(values) > MAX_TAG_VALUES:
            return None, "%s.values holds %d values; at most %d" % (where, len(values), MAX_TAG_VALUES)
        for position, value in enumerate(values):
            problem = check_value(value, "%s.values[%d]" % (where, position))
            if problem:
                return None, problem
        if len(set(values)) != len(values):
            return None, "%s.values names a value twice" % where
        wanted = [value for value in values if value != ""]
        conditions.append((key, set(wanted) if wanted else None))
    return conditions, None


def tags_match(job_tags_, conditions):
    """Every key must be there; a key's values are alternatives; a key without values matches any value."""
    for key, values in conditions:
        if key not in job_tags_:
            return False
        if values is not None and job_tags_[key] not in values:
            return False
    return True


def create_time_window(filters, now_ms):
    """The window ``(start_ms, end_ms)`` a tag search covers, or an error message.

    ``filters`` are the search's ``(key, operator, values)``; a ``create_time`` filter must be ``between`` two times in
    milliseconds no more than 31 days apart; without one the window is the last 31 days.
    """
    windows = [(operator, values) for key, operator, values in filters if key == "create_time"]
    if not windows:
        return (now_ms - WINDOW_MS, now_ms), None
    if len(windows) > 1:
        return None, "with tags, give create_time once (a between filter of at most %d days)" % WINDOW_DAYS
    operator, values = windows[0]
    if operator != "between":
        return None, "with tags, the create_time filter must be between [start, end] (milliseconds), not %s" % operator
    try:
        start, end = (int(float(value)) for value in values)
    except ValueError:
        return None, "with tags, the create_time filter takes two times in milliseconds, got %r" % (values,)
    if start > end:
        return None, "the create_time window starts after it ends: %d > %d" % (start, end)
    if end - start > WINDOW_MS:
        return None, "with tags, the create_time window spans at most %d days (%d ms), got %d ms" % (WINDOW_DAYS, WINDOW_MS, end - start)
    return (start, end), None
