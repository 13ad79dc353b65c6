# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which jobs a call is about: the selectors parsed into keys and searches, before any request.

* ids: ``training_job_id``, ``training_job_ids`` (v2 keys: the id), ``job_id`` + ``version_id`` and ``v1_jobs``
  (v1 keys ``('v1', job_id, version_id)``), each checked (:func:`check_job_id`, :func:`v1_ids_key`; the door's ``selection_checks`` reads the options by name);
* searches: ``name`` and/or ``tags``, refined by ``latest`` (the newest match only) and ``workspace_id`` (the
  workspace searched; ``0`` is the default one), as a :class:`Search`: the filters, tags and workspace of the
  request body, the exact-name rule applied to the answers, and how messages name it.

The search API's own rules (the official SDK's ``JobSearches`` and ``ListTagFilter``: at most 10 tag keys, no
key twice, at most 10 distinct values a key, keys of 1-128 and values of 0-255 letters, digits, spaces and
``_ . : = + - @`` - values also ``/`` -, keys without leading or trailing spaces, a workspace ``0`` or 32
characters) are enforced here, naming the option, so a call that breaks them sends no request.  ``search.py``
pages through the answers; ``query.py`` turns them into items.
"""

from __future__ import annotations

import re
import time

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_value, label


# What a training job id looks like (ModelArts issues UUIDs): anything else, "." and ".." above all, never
# reaches a URL path.
JOB_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


# What ModelArts issues as a training job id: a UUID (with or without its dashes).  A value of another shape is still
# asked for (JOB_ID_PATTERN decides what may be sent), but a "not found" for it is final and says it is no id.
UUID_PATTERN = re.compile(r"^(?:[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[0-9A-Fa-f]{32})$")
# A job id as the service shows them, for messages.
SAMPLE_JOB_ID = "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"


def can_be_job_id(job_id):
    """Whether ``job_id`` has the shape of the ids ModelArts gives training jobs (a UUID)."""
    return isinstance(job_id, str) and bool(UUID_PATTERN.match(job_id.strip()))


def not_a_job_id(name_option="name"):
    """Why a "not found" for a v2 key that :func:`can_be_job_id` refuses is final (the message names the key already),
    and what to use instead: ``name_option`` is the entry point's option that selects jobs by name (None when it has
    none: the lookup)."""
    text = "not a training job id, which is a UUID such as %s" % SAMPLE_JOB_ID
    if name_option:
        return text + ": to select jobs by their name, use %s" % name_option
    return text + ": the lookup reads jobs by id; modelarts_training_job_info's name finds a name's jobs"


def v2_key(job_id):
    """The key of a v2 job: its id."""
    return str(job_id)


def check_job_id(value, name):
    """The v2 job id ``value`` given as ``name`` (an option, a term), stripped; ``ConnectionConfigError`` when it cannot be one."""
    text = str(value).strip() if value is not None else ""
    if not text:
        raise ConnectionConfigError("%s must not be empty" % name)
    if not JOB_ID_PATTERN.fullmatch(text):
        raise ConnectionConfigError(
            "%s: %s is not a training job id (ModelArts ids look like 3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718: letters, digits, '-', '_' and '.', "
            "starting with a letter or digit, at most 128 characters)" % (name, repr(label(text, 60)))
        )
    return text


def v1_key(job_id, version_id):
    """The key of a legacy v1 job version."""
    return ("v1", int(job_id), int(version_id))


# -- searches -------------------------------------------------------------------------------------

# The search API's limits on tags (ListTagFilter / JobSearches).
MAX_TAG_KEYS = 10
MAX_TAG_VALUES = 10
TAG_KEY_PATTERN = re.compile(r"[\w .:=+@-]{1,128}")
TAG_VALUE_PATTERN = re.compile(r"[\w .:/=+@-]{0,255}")
# The default workspace, or a workspace id of 32 characters.
DEFAULT_WORKSPACE = "0"
WORKSPACE_PATTERN = re.compile(r"0|[A-Za-z0-9]{32}")
# The widest create_time window a tag search covers (the service's default when the request gives none: the last 31 days).
DAY_MS = 24 * 3600 * 1000
TAG_WINDOW_MS = 31 * DAY_MS
# How far back a baseline's tag search walks those windows (baseline.max_age_days): by default, and at most (ten years:
# 118 windows after the service's own, one search each).
DEFAULT_MAX_AGE_DAYS = 400
MAX_AGE_DAYS_LIMIT = 3650


def utc_text(epoch_ms):
    """A time in epoch milliseconds as messages give it: ``2026-10-01 08:00:00 UTC``."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch_ms // 1000))


def searches_back(search, what, end_ms, max_age_days):
    """``[(search, how messages name it)]`` of a baseline ``search`` (``what`` names it): itself (the service's own window)
    and, for a tag search with ``end_ms`` known (the newest candidate's creation), one narrowed to each of the
    :func:`tag_windows` back from ``end_ms`` - in the order they are asked."""
    searches = [(search, what)]
    if search.tags and end_ms is not None:
        for start, end in tag_windows(end_ms, max_age_days):
            searches.append((search.in_window(start, end), "%s created from %s to %s" % (what, utc_text(start), utc_text(end))))
    return searches


def searched_back_text(max_age_days, end_ms, searches):
    """What a baseline's tag search that walked back its windows and found nothing looked at."""
    return "the tag search looked at the jobs created up to %d days before %s, the newest candidate's creation (baseline.max_age_days; %d searches: " % (
        max_age_days,
        utc_text(end_ms),
        searches,
    ) + "a tag search covers %d days a request)" % (TAG_WINDOW_MS // DAY_MS)


def own_name_warning(name, names):
    """The warning for a baseline searched by ``name`` (None: not by a name alone) that is among ``names`` (those of the
    call's jobs), or None: each candidate is then compared with the run before it, refused or not."""
    if name is None or name not in names:
        return None
    return (
        "baseline.name '%s' is the name of the job this call gates: the baseline is the run before it, refused or not, not the model in "
        "production; keep the production model in a record (baseline: {record: PATH}, the role's training_job_gate_production)" % label(name)
    )


def tag_windows(end_ms, max_age_days):
    """The ``(start_ms, end_ms)`` windows (both included, newest first, none longer than :data:`TAG_WINDOW_MS`, none
    overlapping) that together cover the ``max_age_days`` days up to ``end_ms``: what a tag search asks for beyond the
    service's default window, one search each."""
    floor = end_ms - max_age_days * DAY_MS
    windows = []
    while end_ms >= floor:
        start = max(floor, end_ms - TAG_WINDOW_MS)
        windows.append((start, end_ms))
        end_ms = start - 1
    return windows


def check_workspace_id(value, option="workspace_id"):
    """The workspace id ``value`` as text, or None when not given; ``ConnectionConfigError`` unless ``0`` or 32 letters and digits."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ConnectionConfigError("%s must be a string, got %s" % (option, describe_value(value, 40)))
    text = str(value).strip()
    if not WORKSPACE_PATTERN.fullmatch(text):
        raise ConnectionConfigError(
            "%s: %s is not a workspace id (0, the default workspace, or the 32 letters and digits of a workspace's id)" % (option, repr(label(text, 60)))
        )
    return text


class Frozen(object):
    """A part set once in ``__init__`` (through :meth:`_set`), never after: what the door built and a room reads
    (``Search``, ``Selection``, and the checked metrics and baseline of ``results/metrics.py``)."""

    __slots__ = ()

    def _set(self, **values):
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError("%s is immutable once built: %s cannot be set" % (type(self).__name__, name))

    def __delattr__(self, name):
        raise AttributeError("%s is immutable once built: %s cannot be deleted" % (type(self).__name__, name))


class ReadOnlyList(list):
    """A list that cannot be changed once built (it still equals a list with the same items)."""

    __slots__ = ()

    def _refuse(self, *_args, **_kwargs):
        raise TypeError("this list is immutable once built")

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


class Search(Frozen):
    """A search for jobs: ``name`` (matched exactly), ``tags`` (:func:`parse_tags`' shape), ``latest`` (the newest match
    only, by ``create_time``), ``workspace_id`` (None: the default workspace) and ``phases`` (None: any; else only the jobs
    the service shows in one of them - the event source's search for the unfinished jobs of its selection).  What
    ``search.py`` asks of it: :meth:`filters` and :meth:`fields` (the request body), :meth:`matches` (the exact name),
    :meth:`describe`."""

    __slots__ = ("name", "tags", "latest", "workspace_id", "phases", "created_between")

    def __init__(self, name=None, tags=(), latest=False, workspace_id=None, phases=None, created_between=None):
        # pylint: disable=too-many-arguments
        self._set(
            name=name,
            tags=tuple((key, tuple(values)) for key, values in tags),
            latest=bool(latest),
            workspace_id=workspace_id,
            phases=tuple(phases) if phases is not None else None,
            # (start, end) in epoch milliseconds, both included: the create_time window asked for (None: the service's
            # default, for a tag search the last 31 days).  in_phases and in_window make new searches.
            created_between=tuple(int(bound) for bound in created_between) if created_between is not None else None,
        )

    def in_phases(self, phases):
        """This search narrowed to the jobs the service shows in one of ``phases``."""
        return Search(name=self.name, tags=self.tags, latest=self.latest, workspace_id=self.workspace_id, phases=phases, created_between=self.created_between)

    def in_window(self, start_ms, end_ms):
        """This search narrowed to the jobs created from ``start_ms`` to ``end_ms`` (epoch milliseconds, both included): a
        tag search's window further back than the service's default one (:func:`tag_windows`)."""
        return Search(
            name=self.name, tags=self.tags, latest=self.latest, workspace_id=self.workspace_id, phases=self.phases, created_between=(start_ms, end_ms)
        )

    def filters(self):
        """The body's ``filters``: the name's (the service's name filter matches substrings; :meth:`matches` is exact), the
        phases' when given, and the ``create_time`` window's (``between``, as milliseconds in text) when given."""
        filters = [{"key": "name", "operator": "like", "value": [self.name]}] if self.name is not None else []
        if self.phases is not None:
            filters.append({"key": "phase", "operator": "in", "value": list(self.phases)})
        if self.created_between is not None:
            filters.append({"key": "create_time", "operator": "between", "value": [str(bound) for bound in self.created_between]})
        return filters

    def fields(self):
        """The body's other fields: ``tags`` (``ListTagFilter``s) and ``workspace_id``, when given."""
        fields = {}
        if self.tags:
            fields["tags"] = [{"key": key, "values": list(values)} for key, values in self.tags]
        fields.update(workspace_fields(self.workspace_id))
        return fields

    def matches(self, document):
        """Whether a search result is one of this search's jobs (its name exactly, when a name is given)."""
        if self.name is None:
            return True
        metadata = document.get("metadata") if isinstance(document, dict) else None
        return isinstance(metadata, dict) and metadata.get("name") == self.name

    def describe(self, window=False):
        """How messages name the search: ``named 'nightly' tagged team=vision in workspace 0123...``; with ``window``, a tag
        search adds the creation window it looks in (``created in the last 31 days``)."""
        parts = []
        if self.name is not None:
            parts.append("named '%s'" % label(self.name))
        if self.tags:
            parts.append(
                "tagged %s" % ", ".join(label(key, 60) + ("=" + "|".join(label(v, 60) for v in values) if values else "") for key, values in self.tags)
            )
        if self.workspace_id is not None:
            parts.append("in workspace %s" % self.workspace_id)
        if self.phases is not None:
            parts.append("in phase %s" % "|".join(self.phases))
        if self.created_between is not None:
            parts.append("created from %s to %s" % tuple(utc_text(bound) for bound in self.created_between))
        elif window and self.tags:
            parts.append("created in the last %d days" % (TAG_WINDOW_MS // DAY_MS))
        return " ".join(parts)

    def coverage(self):
        """What the search can find, said where it found nothing and that is less than every job: a tag search covers the
        jobs created in the last 31 days only (:data:`TAG_WINDOW_MS`: the service's window when the request gives no
        ``create_time``, as the collection's never does); empty for a search by name alone."""
        if not self.tags:
            return ""
        return "a tag search covers the jobs created in the last %d days only (the service's window)" % (TAG_WINDOW_MS // DAY_MS)


def closest_names(name, names, count=3):
    """The names of ``names`` closest to ``name``, closest first, at most ``count``: ``difflib.get_close_matches`` (its
    cutoff 0.6), the rule ``options.unknown_names`` ranks option names by; ``name`` itself is never offered."""
    import difflib  # pylint: disable=import-outside-toplevel  # only a name that matches nothing needs it

    return difflib.get_close_matches(str(name), [other for other in dict.fromkeys(names) if other != name], n=count)


def closest_text(search, names, page_size):
    """How a message gives the names closest to ``search.name`` among ``names`` (those of the ``page_size`` newest jobs of
    its workspace): ``closest names: 'churn-model', 'churn-models'``, or that none comes close."""
    close = closest_names(search.name, names)
    if close:
        return "closest names: %s" % ", ".join("'%s'" % label(other) for other in close)
    where = "in workspace %s" % search.workspace_id if search.workspace_id is not None else "in the default workspace"
    return "no name of the %d newest jobs %s comes close" % (page_size, where)


def workspace_fields(workspace_id):
    """The body field that makes a search look in ``workspace_id`` (none for the default workspace's None)."""
    return {"workspace_id": workspace_id} if workspace_id is not None else {}


# -- selection ------------------------------------------------------------------------------------


class Selection(Frozen):
    """Which jobs a call is about: ``keys`` (v2 ids and v1 keys, in order), or a :class:`Search` (``search``; ``name``
    alone builds one); ``single`` when one job was asked for; ``workspace_id`` the workspace its searches look in;
    ``name_option`` the entry point's option that selects jobs by name (messages point to it).  Immutable: ``keys`` is a
    :class:`ReadOnlyList`."""

    __slots__ = ("keys", "name_option", "search", "single", "workspace_id")

    def __init__(self, keys=(), name=None, single=False, search=None, workspace_id=None, name_option="name"):
        if search is None and name is not None:
            search = Search(name=name, workspace_id=workspace_id)
        # name_option: how the entry point selects jobs by name, for a "not found" of a value that cannot be an id (None: it cannot).
        self._set(
            keys=ReadOnlyList(keys),
            name_option=name_option,
            search=search,
            single=single,
            workspace_id=search.workspace_id if search is not None else workspace_id,
        )

    @property
    def name(self):
        """The name searched, or None."""
        return self.search.name if self.search is not None else None


# A v1 id given as text (a templated value is text): decimal digits, an optional minus sign so that "-3" is
# refused as negative rather than as not a number.  ASCII only: str.isdigit() takes superscripts int() refuses.
_V1_ID_TEXT = re.compile(r"-?[0-9]+")


def v1_ids_key(job_id, version_id, prefix):
    """The v1 key of ``job_id`` and ``version_id``: the one rule of the module's options, the lookup's terms, a baseline
    and a production record's jobs (each names its values: ``prefix`` and ``job_id`` / ``version_id``).

    Each id is an int (never a bool) or a string of decimal digits (templated values are text), and not
    negative.  Anything else - a float, even ``10.0``, ``true``, ``-3``, any other string - is refused with
    a ``ConnectionConfigError`` naming ``prefix`` and the id (``term 0: job_id must be an integer, got 10.9``),
    never coerced: ``int(10.9)`` is 10, another job.
    """
    key = []
    for named, value in (("job_id", job_id), ("version_id", version_id)):
        number = value
        if isinstance(value, str) and _V1_ID_TEXT.fullmatch(value):
            try:
                number = int(value)
            except ValueError:  # over Python's limit on digits: not an id either
                pass
        if isinstance(number, bool) or not isinstance(number, int):
            raise ConnectionConfigError("%s%s must be an integer, got %s" % (prefix, named, describe_value(value, 40)))
        if number < 0:
            raise ConnectionConfigError("%s%s must not be negative, got %s" % (prefix, named, describe_value(value, 40)))
        key.append(number)
    return v1_key(*key)
