# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job produced: the ``metrics`` a call reads from each Completed job, the ``baseline`` it compares them with,
and the verdict on their bounds.  The door (``query.py``) imports this file only when ``metrics`` or ``baseline`` is
given: a call without them loads none of it (nor ``metric_reads.py``, nor ``matching.py``).

* :class:`Metric`, :class:`Baseline` and :class:`Plan` are the typed part the door builds before any request
  (``door/metric_checks.py`` reads each entry's keys, the ``regex``, the bounds and what ``baseline`` selects); nothing
  here reads an option by its name.
* :meth:`Plan.measure` is the one call every entry point makes (the module and the lookup through ``Query.run``, the
  event source through ``Query.read_metrics`` for the items of its events): it reads the metrics of every Completed
  item (``metric_reads.py``, concurrently, once per job, within the deadline; never a job in another phase), finds and
  reads the baseline (the job given, or the newest Completed one a search selects that is not a candidate), and sets
  each item's ``metrics`` and ``metrics_ok`` in place.
* The verdict fails closed: a bounded metric with no value (no match, not a number, NaN, an API error, a 403, a log
  not ready) has ``ok: false``; it never opens a bound.  :class:`Measured` holds the baseline's item, the warnings and
  one message line per broken bound.
"""

from __future__ import annotations

from types import MappingProxyType


from ansible_collections.modelarts.training.plugins.module_utils.results import diagnostics
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.fanout import DEFAULT_MAX_CONCURRENCY, fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.results.matching import Matcher
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_reads import Reading, read_job
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_options import (
    IMPROVEMENT_BOUNDS,
)
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search, own_name_warning, searched_back_text, searches_back
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import DEFAULT_MAX_AGE_DAYS, Frozen
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_job, label, name_key

COMPLETED = "Completed"
# How many jobs a baseline search offers are read by their own GET before the search is said to have found none
# Completed (a search index may lag behind a job's own document).
BASELINE_TRIES = 3
# Differences are compared and shown to 12 significant digits: 0.3 - 0.2 improves by 0.1, not 0.09999999999999998.
SIGNIFICANT = 12


def _number_text(value):
    """The shortest text that reads back as ``value`` (Python's ``repr`` of a float, without a trailing ``.0``: ``0.9``,
    ``0.8999999999``, ``20``): a value and a bound that differ never print the same ("is 0.9, below min 0.9" cannot happen)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _rounded(value):
    return float("%.*g" % (SIGNIFICANT, value))


# -- the options --------------------------------------------------------------------------------------


class Metric(Frozen):
    """One checked entry of ``metrics`` (immutable): ``name``, ``source`` (as given: ``auto`` resolves per job,
    :meth:`source_for`), ``regex`` and ``pattern`` (its index among the distinct regexes of the call), ``task``,
    ``lines``, ``pick``, ``group``, ``goal`` and ``bounds`` (``{min, max, min_improvement, min_relative_improvement}``,
    floats or None, read-only)."""

    __slots__ = ("index", "name", "source", "regex", "pattern", "task", "lines", "pick", "group", "goal", "bounds")

    def __init__(self, index, name, source, regex, task, lines, pick, group, goal, bounds, pattern=None):
        # pylint: disable=too-many-arguments
        self._set(
            index=index,
            name=name,
            source=source,
            regex=regex,
            pattern=pattern,
            task=task,
            lines=lines,
            pick=pick,
            group=group,
            goal=goal,
            bounds=MappingProxyType(dict(bounds)),
        )

    def with_pattern(self, pattern):
        """This metric with ``pattern``, the index of its regex among the call's distinct ones."""
        return Metric(self.index, self.name, self.source, self.regex, self.task, self.lines, self.pick, self.group, self.goal, self.bounds, pattern)

    @property
    def bounded(self):
        """Whether any bound is set: then a missing value fails the metric."""
        return any(value is not None for value in self.bounds.values())

    def source_for(self, api):
        """The source read for a job of ``api``: as given, or for ``auto`` ``v1`` on a v1 job, ``log`` with a ``regex``, else ``ft_metrics``."""
        if self.source != "auto":
            return self.source
        if api == "v1":
            return "v1"
        return "log" if self.regex is not None else "ft_metrics"

    def wrong_api(self, source, api):
        """Why ``source`` cannot be read on a job of ``api`` (None when it can)."""
        if source == "v1" and api != "v1":
            return "source v1 reads a v1 job's model_metric_list; this is a %s job" % label(api)
        if source in ("log", "ft_metrics") and api != "v2":
            return "source %s reads a v2 job's %s; this is a %s job" % (source, "task log" if source == "log" else "ft-metrics", label(api))
        return None

    def given(self):
        """The entry as checked, for the decision record: every key that is set."""
        entry = dict(name=self.name, source=self.source, pick=self.pick, goal=self.goal)
        if self.regex is not None:
            entry.update(regex=self.regex, lines=self.lines)
        entry.update((key, value) for key, value in (("task", self.task), ("group", self.group)) if value is not None)
        entry.update((key, value) for key, value in self.bounds.items() if value is not None)
        return entry


class Baseline(Frozen):
    """The checked ``baseline`` (immutable): ``key`` (a v2 id or a v1 key), ``search`` (a ``selection.Search`` for
    Completed jobs, and ``max_age_days``: how far back a tag search walks) or ``record`` (the path of a production record,
    with ``record_name`` picking one of its jobs and ``record_key`` verifying its ``hmac_sha256``: ``production.py``), and
    ``required``."""

    __slots__ = ("key", "search", "required", "record", "record_name", "record_key", "max_age_days")

    def __init__(self, key=None, search=None, required=True, record=None, record_name=None, record_key=None, max_age_days=None):
        # pylint: disable=too-many-arguments
        self._set(
            key=key,
            search=search,
            required=required,
            record=record,
            record_name=record_name,
            record_key=record_key,
            max_age_days=DEFAULT_MAX_AGE_DAYS if max_age_days is None else max_age_days,
        )

    def __repr__(self):
        # Never the record_key.
        return "Baseline(key=%r, record=%r, required=%r)" % (self.key, self.record, self.required)

    def describe(self):
        """How messages name what the baseline selects."""
        if self.record is not None:
            return "the job of the production record %s" % repr(label(self.record, 200))
        if self.key is not None:
            return "training job %s" % name_key(self.key)
        return "the newest Completed training job %s" % self.selects()

    def selects(self):
        """How messages name a baseline search: ``named 'resnet-prod' tagged stage=production``."""
        search = self.search
        return Search(name=search.name, tags=search.tags, workspace_id=search.workspace_id).describe()


# -- the verdict ------------------------------------------------------------------------------------


def _improvement(metric, value, base):
    return _rounded(value - base if metric.goal == "max" else base - value)


def judge(metric, reading, base_reading, baseline_state):
    """``(entry, broken)`` for one metric of one job: the item's ``metrics.<name>`` (``value, source, ok, problems,
    baseline_value, improvement``) and the lines of the bounds it broke (a missing value included: fail closed).

    ``base_reading`` is the baseline's :class:`Reading` (None without one); ``baseline_state`` is ``None`` (no baseline
    asked), ``"found"``, ``"skipped"`` (not found, not required) or the text saying why none was found (required)."""
    value = reading.value
    base = base_reading.value if base_reading is not None else None
    entry = {"value": value, "source": reading.source, "ok": None, "problems": list(reading.problems), "baseline_value": base, "improvement": None}
    if value is not None and base is not None:
        entry["improvement"] = _improvement(metric, value, base)
    if not metric.bounded:
        return entry, []
    bounds = metric.bounds
    name = label(metric.name, 60)
    against = " (the baseline's is %s)" % _number_text(base) if base is not None else ""
    broken, applied = [], False
    if value is None:
        broken.append("%s has no value, so its bounds fail: %s" % (name, "; ".join(reading.problems) or "nothing was read"))
    else:
        shown = _number_text(value)
        if bounds["min"] is not None:
            applied = True
            if value < bounds["min"]:
                broken.append("%s is %s, below min %s%s" % (name, shown, _number_text(bounds["min"]), against))
        if bounds["max"] is not None:
            applied = True
            if value > bounds["max"]:
                broken.append("%s is %s, above max %s%s" % (name, shown, _number_text(bounds["max"]), against))
        wanted = [key for key in IMPROVEMENT_BOUNDS if bounds[key] is not None]
        if wanted and baseline_state == "found" and base is None:
            broken.append(
                "%s is %s, but the baseline's value could not be read for %s: %s"
                % (name, shown, " and ".join(wanted), "; ".join(base_reading.problems) or "nothing was read")
            )
        elif wanted and baseline_state not in ("found", "skipped"):
            broken.append("%s is %s, but there is no baseline to compare with for %s: %s" % (name, shown, " and ".join(wanted), baseline_state))
        elif wanted and baseline_state == "found":
            applied = True
            improvement = entry["improvement"]
            relative = improvement / abs(base) if base else None
            by = "%s%s" % (_number_text(improvement), " (%.4g%%)" % (relative * 100) if relative is not None else "")
            if bounds["min_improvement"] is not None and improvement < bounds["min_improvement"]:
                broken.append(
                    "%s is %s, improving on the baseline's %s by %s, less than min_improvement %s (goal %s)"
                    % (name, shown, _number_text(base), by, _number_text(bounds["min_improvement"]), metric.goal)
                )
            limit = bounds["min_relative_improvement"]
            if limit is not None and base == 0:
                # A fraction of 0 is 0 whatever the fraction: the bound would ask for nothing.
                broken.append(
                    "%s is %s, but min_relative_improvement %s cannot be computed against the baseline's value of 0 (a fraction of 0 is 0): "
                    "use min_improvement" % (name, shown, _number_text(limit))
                )
            elif limit is not None and improvement < _rounded(limit * abs(base)):
                broken.append(
                    "%s is %s, improving on the baseline's %s by %s, less than min_relative_improvement %s (%s%%, goal %s)"
                    % (name, shown, _number_text(base), by, _number_text(limit), _number_text(_rounded(limit * 100)), metric.goal)
                )
    entry["problems"].extend(line for line in broken if line not in entry["problems"])
    entry["ok"] = False if broken else (True if applied else None)
    return entry, broken


def overall(entries):
    """``metrics_ok`` of a job: false when any bound fails, true when all that apply hold, null when none applies."""
    oks = [entry["ok"] for entry in entries.values()]
    if False in oks:
        return False
    return True if True in oks else None


# -- reading ----------------------------------------------------------------------------------------


class Measured(object):
    """What :meth:`Plan.measure` found: ``baseline`` (the baseline's item - of the newest Completed candidate when the
    candidates have different ones - or None), ``warnings``, and ``unfit`` (``[(item, [lines])]``: each Completed job whose
    ``metrics_ok`` is false, with one line per broken bound); ``baselines`` (``{id(item): baseline item}``) says which
    baseline each Completed job was compared with."""

    def __init__(self, baseline=None, warnings=None, unfit=None, baselines=None):
        self.baseline = baseline
        self.warnings = list(warnings or [])
        self.unfit = list(unfit or [])
        self.baselines = dict(baselines or {})

    def _own_baseline(self, item):
        """`` (baseline <job>)`` for a job compared with another baseline than :attr:`baseline`, else empty."""
        own = self.baselines.get(id(item))
        if own is None or own is self.baseline:
            return ""
        return " (baseline %s)" % describe_job(None, own)

    def job_messages(self):
        """One line per broken bound: ``training job <id> (<name>): <metric> ...``."""
        return ["%s%s: %s" % (describe_job(None, item), self._own_baseline(item), line) for item, lines in self.unfit for line in lines]

    def message(self, limit=None):
        """One sentence naming each unfit job, each broken bound with its value, the bound and the baseline's value."""
        shown = self.unfit if limit is None else self.unfit[:limit]
        parts = ["%s%s: %s" % (describe_job(None, item), self._own_baseline(item), "; ".join(lines)) for item, lines in shown]
        if len(shown) < len(self.unfit):
            parts.append("and %d more" % (len(self.unfit) - len(shown)))
        count = len(self.unfit)
        head = "%d Completed training job%s did not meet %s metric bounds" % (count, "" if count == 1 else "s", "its" if count == 1 else "their")
        if self.baseline is not None:
            head += " (baseline %s)" % describe_job(None, self.baseline)
        return head + ": " + "; ".join(parts)


class Plan(object):
    """How a call reads what its jobs produced, built by the door from the checked part (``MetricSettings``): the
    ``metrics`` (a tuple of :class:`Metric`), the ``baseline`` (:class:`Baseline` or None) and the distinct
    ``patterns``.  Its one state is :attr:`told`: the warnings already given in its life (the event source's rounds
    share one plan)."""

    def __init__(self, metrics, baseline=None):
        self.patterns = list(dict.fromkeys(metric.regex for metric in metrics if metric.regex is not None))
        # Each metric with the index of its regex among the distinct ones (as the door's metric_settings gives them).
        self.metrics = tuple(
            metric.with_pattern(self.patterns.index(metric.regex)) if metric.regex is not None and metric.pattern is None else metric for metric in metrics
        )
        self.baseline = baseline
        # The warnings given once for the plan's life (the event source's rounds share it): a search by a candidate's name.
        self.told = set()

    def bounds(self):
        """The entries as checked (each key that is set), for the decision record."""
        return [metric.given() for metric in self.metrics]

    def measure(self, query, items, deadline=None, candidates=None, max_concurrency=DEFAULT_MAX_CONCURRENCY, workspace_id=None):
        """Read the metrics of every Completed item of ``items`` and of the baseline, and set each item's ``metrics`` and
        ``metrics_ok`` in place (null for an item in another phase); return a :class:`Measured`.  Never raises for the
        service's answers.

        ``query`` is the door (``query.Query``: its client, clock, ``fetch``, ``search`` and secrets; never its options);
        ``deadline`` (a reading of its clock) bounds every read (default: one ``request_timeout`` from now);
        ``candidates`` are the keys a baseline search leaves out (default: the items' ids) - with every other document of
        the ``items`` (:class:`Candidates`); ``max_concurrency`` bounds the reads at once; ``workspace_id`` is the
        workspace a baseline search looks in unless the baseline names its own (the door gives its selection's or the
        watch's)."""
        clock = query.clock
        if deadline is None:
            deadline = clock() + float(query.client.service.request_timeout)
        completed = []
        for item in items:
            if isinstance(item, dict):
                item["metrics"], item["metrics_ok"] = None, None
                if item.get("phase") == COMPLETED and item.get("id") is not None and "error" not in item:
                    completed.append(item)
        if candidates is None:
            candidates = [_key_of(item) for item in items if isinstance(item, dict)]
        known = Candidates(candidates, [item for item in items if isinstance(item, dict)])
        secrets = query.masking_secrets()
        logs = sum(1 for metric in self.metrics if metric.regex is not None or metric.source == "log")
        at_once = max(1, min(int(max_concurrency), (len(completed) + 1) * max(1, logs)))
        window = max(diagnostics.PREVIEW_MIN_BYTES, min(diagnostics.PREVIEW_TAIL_BYTES, diagnostics.PREVIEW_BUDGET_BYTES // at_once))
        matcher = Matcher(self.patterns, clock) if self.patterns else None

        def read(item, when):
            return read_job(query.client, item, self.metrics, matcher, secrets, when, window)

        def run(unit, when):
            if unit == "baseline":
                outcomes = find_baseline(query, self.baseline, known, when, judged=completed, workspace_id=workspace_id)
                for outcome in outcomes:
                    if outcome.kind == Outcome.FOUND and outcome.readings is None:
                        outcome.readings = read(outcome.item, when)
                        _check_recorded(outcome, self.metrics)
                return outcomes
            return read(completed[unit], when)

        # No Completed job, no comparison: the baseline is chosen for each Completed candidate (created before it).
        units = list(range(len(completed))) + (["baseline"] if self.baseline is not None and completed else [])
        try:
            results = fetch_concurrently(units, run, max_concurrency=max_concurrency, deadline=deadline, clock=clock)
        finally:
            if matcher is not None:
                matcher.close()
        return self._verdict(completed, results, secrets)

    def _outcomes(self, completed, results, secrets):
        """One :class:`Outcome` per Completed item: the baseline unit's, or - when it raised or did not end by the
        deadline - a failure for each (which fails closed whatever ``required`` says)."""
        if self.baseline is None:
            return [None] * len(completed)
        outcomes = results.get("baseline")
        if isinstance(outcomes, BaseException) or not isinstance(outcomes, list) or len(outcomes) != len(completed):
            why = "the baseline could not be read: %s" % (label(outcomes, 300, secrets) if isinstance(outcomes, BaseException) else "no answer")
            return [Outcome(Outcome.FAILED, why=why)] * len(completed)
        return outcomes

    def _verdict(self, completed, results, secrets):
        warnings, bases, baselines = [], [], {}
        skipped = set()
        outcomes = self._outcomes(completed, results, secrets)
        unfit = []
        for index, item in enumerate(completed):
            outcome, state, base_readings = outcomes[index], None, None
            if outcome is not None and outcome.warning and outcome.warning not in self.told:
                self.told.add(outcome.warning)
                warnings.append(outcome.warning)
            if outcome is not None and outcome.kind == Outcome.FOUND:
                state, base_readings = "found", outcome.readings
                base_item = outcome.item
                if not any(base_item is seen for seen in bases):
                    bases.append(base_item)
                    base_item["metrics"] = dict((name, _plain_entry(reading)) for name, reading in base_readings.items())
                    base_item["metrics_ok"] = None
                baselines[id(item)] = base_item
            elif outcome is not None and outcome.kind == Outcome.NONE and not self.baseline.required:
                # The one skip: the selection answered and matched no job at all (a first deployment).
                state = "skipped"
                if outcome.why not in skipped:
                    skipped.add(outcome.why)
                    warnings.append("baseline: %s; the improvement bounds were skipped (baseline.required is false)" % outcome.why)
            elif outcome is not None:
                state = outcome.why  # fails closed, whatever required says
            readings = results.get(index)
            if isinstance(readings, BaseException):
                line = "could not be read: %s" % label(readings, 300, secrets)
                readings = dict((metric.name, Reading(metric.source_for(item.get("api_version"))).fail(line)) for metric in self.metrics)
            entries, lines = {}, []
            for metric in self.metrics:
                entries[metric.name], broken = judge(metric, readings[metric.name], base_readings.get(metric.name) if base_readings else None, state)
                lines.extend(broken)
            item["metrics"] = entries
            item["metrics_ok"] = overall(entries)
            if item["metrics_ok"] is False:
                unfit.append((item, lines))
        shown = None
        if bases:
            newest = max((item for item in completed if id(item) in baselines), key=lambda item: _created_ms(item) or 0)
            shown = baselines[id(newest)]
        return Measured(shown, warnings, unfit, baselines)


def _plain_entry(reading):
    return {"value": reading.value, "source": reading.source, "ok": None, "problems": list(reading.problems), "baseline_value": None, "improvement": None}


def _key_of(item):
    if item.get("api_version") == "v1" and item.get("version_id") is not None:
        return ("v1", item.get("id"), item.get("version_id"))
    return item.get("id")


# -- the baseline ------------------------------------------------------------------------------------


def _created_ms(item):
    """A job's ``create_time`` in epoch milliseconds as its document gives it (v2 ``metadata.create_time``, v1
    ``create_time``), or None; the item's own ``create_time`` is whole seconds, too coarse to order jobs by."""
    details = item.get("details") if isinstance(item, dict) else None
    if not isinstance(details, dict):
        return None
    if item.get("api_version") == "v1":
        value = details.get("create_time")
    else:
        metadata = details.get("metadata")
        value = metadata.get("create_time") if isinstance(metadata, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _identity(item):
    """What every document of one job shares, whatever its API version: its name and its creation time (a v1 version and
    the v2 job the service shows for it), or None when either is unknown."""
    created = _created_ms(item)
    name = item.get("name") if isinstance(item, dict) else None
    if created is None or not isinstance(name, str):
        return None
    return (name, created)


class Candidates(object):
    """The jobs of a call: ``keys`` (v2 ids and v1 keys) and the identities (:func:`_identity`) of their documents, so that
    a job is left out whatever API version its other document comes from."""

    def __init__(self, keys=(), items=()):
        self.keys = set(key for key in keys if key is not None)
        self.items = list(items)
        self.identities = set(identity for identity in (_identity(item) for item in self.items) if identity is not None)

    def holds(self, key=None, item=None):
        """The candidate ``key`` or ``item`` is (a document of), or None."""
        if key is not None and key in self.keys:
            return key
        identity = _identity(item) if isinstance(item, dict) else None
        if identity is not None and identity in self.identities:
            return identity
        if isinstance(item, dict) and _key_of(item) in self.keys:
            return _key_of(item)
        return None


class Outcome(object):
    """What :func:`find_baseline` found for one candidate.  ``kind``: :attr:`FOUND` (``item``, Completed by its own GET;
    ``readings`` once read), :attr:`NONE` (the selection answered and matched no job but the candidates' own: the one
    case ``required: false`` skips) or :attr:`FAILED` (a refused or failed request, the deadline, a job found but not
    Completed, ...: fails closed whatever ``required`` says); ``why`` says it for the last two."""

    FOUND, NONE, FAILED = "found", "none", "failed"

    def __init__(self, kind, item=None, why=None):
        self.kind = kind
        self.item = item
        self.why = why
        self.readings = None
        # A production record's job: (the record's path, {metric: the value it holds}), checked once read again.
        self.recorded = None
        # What the call is warned about once (a search by a candidate's own name), or None.
        self.warning = None


def _failed(why):
    return Outcome(Outcome.FAILED, why=why)


def find_baseline(query, baseline, candidates, deadline, judged=(), workspace_id=None):
    """``[Outcome]``, one per item of ``judged`` (the Completed candidates): the baseline each is compared with.

    ``candidates`` (:class:`Candidates`, or keys) are left out, every document of theirs included.  A job given by key is
    every candidate's baseline - never one of them.  A search (in its own ``workspace_id``, else ``workspace_id``: the
    call's) gives each candidate the newest job it selects that was created before that candidate, Completed by its own
    GET; a tag search walks back the service's 31-day windows (:func:`_searched`).  Only a search that answered with no
    job but the candidates' own, in every window, is :attr:`Outcome.NONE`.  A search by a candidate's own name (and no
    tags) warns (``selection.own_name_warning``, the outcomes' ``warning``)."""
    if not isinstance(candidates, Candidates):
        candidates = Candidates(candidates)
    secrets = query.masking_secrets()
    if baseline.record is not None:
        return [_recorded_baseline(query, baseline, candidates, deadline, secrets)] * len(judged)
    if baseline.key is not None:
        return [_given_baseline(query, baseline, candidates, deadline, secrets)] * len(judged)
    search = baseline.search
    if search.workspace_id is None and workspace_id is not None:
        search = Search(name=search.name, tags=search.tags, workspace_id=workspace_id, phases=search.phases)
    what = Search(name=search.name, tags=search.tags, workspace_id=search.workspace_id).describe()
    outcomes = _searched(query, search, baseline.max_age_days, candidates, judged, deadline, what, secrets)
    names = [item.get("name") for item in list(candidates.items) + list(judged) if isinstance(item, dict)]
    warning = own_name_warning(search.name if not search.tags else None, names)
    for outcome in outcomes:
        outcome.warning = warning
    return outcomes


def _searched(query, search, max_age_days, candidates, judged, deadline, what, secrets):
    """``[Outcome]`` for ``judged`` of a baseline ``search``: the service's own window first (a tag search's last 31 days;
    a search by name alone has no window), then, for a tag search, the windows of at most 31 days back from the newest
    candidate's creation to ``max_age_days`` before it (``selection.tag_windows``), one search each (paged), until every
    candidate has its outcome.  A search that fails in any window fails the candidates still without one; only a
    candidate for which every window answered with no job but the candidates' is :attr:`Outcome.NONE`."""
    # pylint: disable=too-many-arguments,too-many-locals
    anchor = max((value for value in (_created_ms(candidate) for candidate in judged) if value is not None), default=None)
    windows = searches_back(search, what, anchor, max_age_days)
    outcomes = [None] * len(judged)
    listed, others_seen = set(), set()
    gets, chosen = {}, {}

    def get(key):
        if key not in gets:
            gets[key] = query.fetch([key], deadline)[key]
        return gets[key]

    for window, described in windows:
        pending = [index for index, outcome in enumerate(outcomes) if outcome is None]
        if not pending:
            break
        try:
            keys, found = query.search(window, deadline)
        except (ModelArtsError, ConnectionConfigError) as error:
            failed = _failed("the search for the newest Completed training job %s failed: %s" % (described, label(error, 300, secrets)))
            for index in pending:
                outcomes[index] = failed
            return outcomes
        listed.update(keys)
        others = [key for key in keys if not candidates.holds(key, found.get(key))]
        others_seen.update(others)
        if others:
            for index in pending:
                outcomes[index] = _before(judged[index], others, found, candidates, get, chosen, what, secrets)
    why = "no Completed training job %s was found" % what
    if listed:
        why += " that is not a job this call selects"
    if len(windows) > 1:
        why += "; " + searched_back_text(max_age_days, anchor, len(windows))
    elif search.coverage():
        why += "; %s" % search.coverage()
    for index, outcome in enumerate(outcomes):
        if outcome is None and others_seen:
            outcomes[index] = _failed(
                "no Completed training job %s was created before %s: the %d it found besides the jobs this call selects were created at or after it"
                % (what, describe_job(None, judged[index]), len(others_seen))
            )
        elif outcome is None:
            outcomes[index] = Outcome(Outcome.NONE, why=why)
    return outcomes


def _given_baseline(query, baseline, candidates, deadline, secrets):
    """The :class:`Outcome` of a baseline given by key: its own GET, never a candidate."""
    if candidates.holds(baseline.key):
        return _failed("%s is also a job this call selects: a job is never its own baseline" % name_key(baseline.key))
    found = query.fetch([baseline.key], deadline)[baseline.key]
    if isinstance(found, BaseException):
        return _failed("%s could not be read: %s" % (baseline.describe(), label(found, 300, secrets)))
    if candidates.holds(None, found):
        return _failed(
            "%s is another document of a job this call selects (the same name and creation time): a job is never its own baseline"
            % describe_job(baseline.key, found)
        )
    if found.get("phase") != COMPLETED:
        return _failed("%s is %s, not Completed" % (describe_job(baseline.key, found), label(found.get("phase"))))
    return Outcome(Outcome.FOUND, item=found)


def _recorded_baseline(query, baseline, candidates, deadline, secrets):
    """The :class:`Outcome` of ``baseline: {record: PATH}``: the record read (and checked) again now - so that a source
    that never ends sees a promotion between two completions -, then its job by its own GET.  Only a path that does not
    exist yet is :attr:`Outcome.NONE`; anything else that is wrong fails closed."""
    # Read through the door (query.Query.read_production): production.py reads the file with record.py, whose bounds
    # are this file's, so this file does not import it (no import cycle).
    read = query.read_production(baseline.record, baseline.record_key, baseline.record_name)
    if read.status == "missing":
        return Outcome(Outcome.NONE, why="%s: no model was promoted there yet" % read.why)
    if read.status != "found":
        return _failed(read.why)
    key, where = read.job.key, repr(label(baseline.record, 200))
    if candidates.holds(key):
        return _failed("%s, the job of the production record %s, is also a job this call selects: a job is never its own baseline" % (name_key(key), where))
    found = query.fetch([key], deadline)[key]
    if isinstance(found, BaseException):
        return _failed("%s, the job of the production record %s, could not be read: %s" % (name_key(key), where, label(found, 300, secrets)))
    if candidates.holds(None, found):
        return _failed(
            "%s, the job of the production record %s, is another document of a job this call selects: a job is never its own baseline"
            % (describe_job(key, found), where)
        )
    if found.get("phase") != COMPLETED:
        return _failed("%s, the job of the production record %s, is %s, not Completed" % (describe_job(key, found), where, label(found.get("phase"))))
    outcome = Outcome(Outcome.FOUND, item=found)
    outcome.recorded = (baseline.record, read.job.values)
    return outcome


def _check_recorded(outcome, metrics):
    """A production record's job read again: a metric the record holds a value for that the service now gives otherwise
    (or not at all) fails the baseline - the job is not what was promoted."""
    if outcome.recorded is None:
        return
    path, values = outcome.recorded
    differs = []
    for metric in metrics:
        if metric.name not in values:
            continue
        reading = outcome.readings.get(metric.name)
        value = reading.value if reading is not None else None
        if value is None:
            problems = "; ".join(reading.problems) if reading is not None else "not read"
            differs.append("%s has no value on the service (%s), %s in the record" % (label(metric.name, 60), problems, _number_text(values[metric.name])))
        elif value != values[metric.name]:
            differs.append("%s is %s on the service, %s in the record" % (label(metric.name, 60), _number_text(value), _number_text(values[metric.name])))
    if differs:
        outcome.kind = Outcome.FAILED
        outcome.why = "%s, the job of the production record %s, is not what was promoted: %s" % (
            describe_job(None, outcome.item),
            repr(label(path, 200)),
            "; ".join(differs),
        )
        outcome.item, outcome.readings = None, None


def _before(candidate, others, found, candidates, get, chosen, what, secrets):
    """The :class:`Outcome` for ``candidate``: the newest of ``others`` (a search's keys, newest first, the candidates left
    out) created before it, read by its own GET (``get``; ``chosen`` keeps one :class:`Outcome` a job); None when every one
    of them was created at or after it (an older window may hold its baseline: :func:`_searched`)."""
    who = describe_job(None, candidate)
    cutoff = _created_ms(candidate)
    if cutoff is None:
        return _failed("the creation time of %s is not known, so no job %s created before it can be chosen" % (who, what))
    reads = 0
    for key in others:
        if not isinstance(key, str):
            return _failed("the search %s answered with a document that cannot be identified: %s" % (what, label(found.get(key), 300, secrets)))
        listed = found.get(key)
        created = _created_ms(listed) if isinstance(listed, dict) else None
        if created is not None and created >= cutoff:
            continue  # created at or after the candidate: never its baseline
        if reads >= BASELINE_TRIES:
            return _failed("of the jobs %s, the %d newest created before %s are candidates or newer by their own GET" % (what, reads, who))
        reads += 1
        item = get(key)
        if isinstance(item, BaseException):
            return _failed("training job %s, the newest %s created before %s, could not be read: %s" % (name_key(key), what, who, label(item, 300, secrets)))
        if candidates.holds(None, item):
            continue
        created = _created_ms(item)
        if created is None:
            return _failed(
                "the creation time of %s (found %s) is not known, so it cannot be told whether it was created before %s" % (describe_job(key, item), what, who)
            )
        if created >= cutoff:
            continue
        if item.get("phase") != COMPLETED:
            return _failed(
                "%s, the newest job %s created before %s, is %s by its own GET, not Completed" % (describe_job(key, item), what, who, label(item.get("phase")))
            )
        if key not in chosen:
            chosen[key] = Outcome(Outcome.FOUND, item=item)
        return chosen[key]
    return None
