# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's reading of the selectors: a task's ``training_job_id``, ``training_job_ids``, ``name``, ``tags``,
``job_id`` with ``version_id``, ``v1_jobs``, ``latest`` and ``workspace_id`` (and a lookup term's ``job_id`` and
``version_id``) read by name and turned into ``job.selection.Selection``, the part the rooms receive, before any
request; the ``tags`` of a selection or a baseline checked against the search API's rules (``parse_tags``)."""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import (
    DAY_MS,
    DEFAULT_MAX_AGE_DAYS,
    MAX_AGE_DAYS_LIMIT,
    TAG_WINDOW_MS,
    MAX_TAG_KEYS,
    MAX_TAG_VALUES,
    TAG_KEY_PATTERN,
    TAG_VALUE_PATTERN,
    Search,
    Selection,
    check_job_id,
    check_workspace_id,
    v1_ids_key,
    v2_key,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_value, label


def v1_selection_key(values, prefix):
    """The v1 key of ``values['job_id']`` and ``values['version_id']`` (a task's options, a lookup's term, a baseline):
    ``job.selection.v1_ids_key``'s rule, the message naming ``prefix`` and the option."""
    if not isinstance(values, dict):
        values = {}
    return v1_ids_key(values.get("job_id"), values.get("version_id"), prefix)


_ID_SELECTORS = ("training_job_id", "training_job_ids", "job_id", "v1_jobs")


def select(values):
    """The :class:`Selection` of ``values`` (``training_job_id``, ``training_job_ids``, ``name``, ``tags``, ``job_id`` with
    ``version_id``, ``v1_jobs``; ``latest`` and ``workspace_id`` refine a search); :class:`ConnectionConfigError`, naming
    the option, for an empty, contradictory or malformed one."""
    tags = parse_tags(values.get("tags"))
    workspace_id = check_workspace_id(values.get("workspace_id"))
    latest = values.get("latest")
    if latest is not None and not isinstance(latest, bool):
        raise ConnectionConfigError("latest must be a boolean, got %s" % describe_value(latest, 40))
    given = [name for name in _ID_SELECTORS + ("name",) if values.get(name) not in (None, [])] + (["tags"] if tags else [])
    if values.get("version_id") is not None and values.get("job_id") is None:
        raise ConnectionConfigError("version_id needs job_id")
    if values.get("job_id") is not None and values.get("version_id") is None:
        raise ConnectionConfigError("job_id needs version_id")
    searched = [name for name in given if name in ("name", "tags")]
    if latest and not searched:
        raise ConnectionConfigError("latest needs name or tags: it keeps the newest of the jobs they match")
    if not given:
        raise ConnectionConfigError("one of training_job_id, training_job_ids, name, tags, job_id with version_id, or v1_jobs is required")
    ids = [name for name in given if name not in ("name", "tags")]
    if searched and ids:
        raise ConnectionConfigError("%s are mutually exclusive (name and tags may be combined)" % ", ".join(given))
    if len(ids) > 1 and set(ids) != {"training_job_ids", "v1_jobs"}:
        raise ConnectionConfigError("%s are mutually exclusive (only training_job_ids and v1_jobs may be combined)" % ", ".join(given))
    if searched:
        name = values.get("name")
        if name is not None and not str(name).strip():
            raise ConnectionConfigError("name must not be empty")
        search = Search(name=name, tags=tags, latest=latest, workspace_id=workspace_id)
        return Selection(search=search, single=bool(latest))
    text = values.get("training_job_id")
    if text is not None:
        return Selection([v2_key(check_job_id(text, "training_job_id"))], single=True, workspace_id=workspace_id)
    if values.get("job_id") is not None:
        return Selection([v1_selection_key(values, "")], single=True, workspace_id=workspace_id)
    keys = []
    for index, job_id in enumerate(values.get("training_job_ids") or []):
        keys.append(v2_key(check_job_id(job_id, "training_job_ids[%d]" % index)))
    for index, job in enumerate(values.get("v1_jobs") or []):
        keys.append(v1_selection_key(job, "v1_jobs[%d]." % index))
    return Selection(keys, workspace_id=workspace_id)


def _tag_value(value, where):
    """One tag value as text: a string, or an integer (never a boolean or a float: ``1.10`` would be ``1.1``)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ConnectionConfigError("%s: a tag value must be a string, got %s (quote numbers such as 1.10 in YAML)" % (where, describe_value(value, 40)))
    text = str(value)
    if not TAG_VALUE_PATTERN.fullmatch(text):
        raise ConnectionConfigError(
            "%s: %s is not a tag value the search takes (0-255 letters, digits, spaces and _ . : / = + - @)" % (where, repr(label(text, 60)))
        )
    return text


def parse_tags(value, option="tags"):
    """``((key, (value, ...)), ...)`` of the ``tags`` option: ``{key: value}``, ``{key: [v1, v2]}`` (any of them),
    ``{key: []}``/``null``/``""`` (the key with any value, ``()``); ``ConnectionConfigError`` naming ``option`` and the
    key for anything the search API refuses.  ``None`` and ``{}`` select by no tag."""
    if value is None or value == {}:
        return ()
    if not isinstance(value, dict):
        raise ConnectionConfigError(
            "%s must be a dict of tag keys to a value, a list of values or null (any value), got %s" % (option, describe_value(value, 40))
        )
    if len(value) > MAX_TAG_KEYS:
        raise ConnectionConfigError("%s: at most %d tag keys, got %d" % (option, MAX_TAG_KEYS, len(value)))
    tags = []
    for key, values in value.items():
        if not isinstance(key, str):
            raise ConnectionConfigError("%s: a tag key must be a string, got %s" % (option, describe_value(key, 40)))
        where = "%s.%s" % (option, label(key, 60))
        if not TAG_KEY_PATTERN.fullmatch(key) or key != key.strip():
            raise ConnectionConfigError(
                "%s: %s is not a tag key the search takes (1-128 letters, digits, spaces and _ . : = + - @, no leading or trailing space)"
                % (option, repr(label(key, 60)))
            )
        if values is None or values == "":
            texts = []
        elif not isinstance(values, list):
            texts = [_tag_value(values, where)]
        else:
            texts = [_tag_value(entry, "%s[%d]" % (where, index)) for index, entry in enumerate(values)]
        if len(texts) > MAX_TAG_VALUES:
            raise ConnectionConfigError("%s: at most %d values a tag key, got %d" % (where, MAX_TAG_VALUES, len(texts)))
        if len(set(texts)) < len(texts):
            raise ConnectionConfigError("%s: a value is given twice" % where)
        if "" in texts and len(texts) > 1:
            raise ConnectionConfigError("%s: an empty value means any value; give it alone (or null, or [])" % where)
        tags.append((key, tuple(text for text in texts if text)))
    return tuple(tags)


def check_max_age_days(value, option="baseline.max_age_days"):
    """``value`` as a number of days from 1 to :data:`MAX_AGE_DAYS_LIMIT` (None: :data:`DEFAULT_MAX_AGE_DAYS`): an integer, or
    its decimal digits as text (templated values are text), never a boolean or a float; ``ConnectionConfigError``
    naming ``option`` otherwise."""
    if value is None:
        return DEFAULT_MAX_AGE_DAYS
    number = value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        number = int(value.strip())
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_AGE_DAYS_LIMIT:
        raise ConnectionConfigError(
            "%s must be a whole number of days from 1 to %d (how far back a tag search walks the service's windows of %d days), got %s"
            % (option, MAX_AGE_DAYS_LIMIT, TAG_WINDOW_MS // DAY_MS, describe_value(value, 40))
        )
    return number


# The options that select jobs (the module's; the lookup's terms and the event source's arguments take some of them).
SELECTION_OPTIONS = ("training_job_id", "training_job_ids", "name", "job_id", "version_id", "v1_jobs", "tags", "latest", "workspace_id")
