# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's check of ``metrics`` and ``baseline``: each entry as given by a module task, a lookup, an event source or
the role, read key by key before any request and turned into ``results.metrics.Metric`` and ``Baseline``, gathered in a
``results.metrics.Plan`` - the part the results rooms receive.  The door imports this file only when ``metrics`` or
``baseline`` is given (it imports ``results/metrics.py``, which a plain GET never loads).

:func:`plan` checks each entry's keys (an unknown one named with the closest), ``name``, ``source``, the ``regex`` (it
compiles, with exactly one group), ``lines``, the bounds (numbers), and that ``baseline`` selects a job a search or a GET
can find; a ``ConnectionConfigError`` names the entry and the key of the first problem."""

from __future__ import annotations

import math
import re

from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import v1_selection_key
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import Search, check_job_id, check_workspace_id, v2_key
from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import check_max_age_days
from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import parse_tags
from ansible_collections.modelarts.training.plugins.module_utils.results import diagnostics
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_options import (
    MetricSettings,
    BASELINE_OPTIONS,
    DEFAULT_METRIC_LINES,
    FT_METRIC_GROUPS,
    IMPROVEMENT_BOUNDS,
    MAX_METRIC_LINES,
    METRIC_BOUNDS,
    METRIC_ENTRY_OPTIONS,
    METRIC_GOALS,
    METRIC_PICKS,
    METRIC_SOURCES,
)
from ansible_collections.modelarts.training.plugins.module_utils.results.metrics import COMPLETED, Baseline, Metric, Plan, _number_text
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import to_bool
from ansible_collections.modelarts.training.plugins.module_utils.text import (
    number_word,
    describe_value,
    expand_user,
    label,
    name_key,
    unknown_names,
    unknown_text,
)


# A regex longer than this is not a metric's pattern.
MAX_REGEX_CHARS = 1000


METRIC_NAME = re.compile(r"^[^\s\x00-\x1f\x7f]([^\x00-\x1f\x7f]{0,126}[^\s\x00-\x1f\x7f])?$")


def _problem(where, text):
    return ConnectionConfigError("%s: %s" % (where, text))


def _text(entry, key, where):
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _problem(where, "%s must be a string, got %s" % (key, describe_value(value, 40)))
    return value


def _choice(entry, key, where, choices, default):
    value = _text(entry, key, where)
    if value is None:
        return default
    if value not in choices:
        raise _problem(where, "%s must be one of %s, got %s" % (key, ", ".join(choices), describe_value(value, 40)))
    return value


def _bound(entry, key, where):
    value = entry.get(key)
    if value is None:
        return None
    number = number_word(value)
    try:
        finite = not isinstance(number, bool) and isinstance(number, (int, float)) and math.isfinite(number)
    except OverflowError:  # an integer beyond any float
        finite = False
    if not finite:
        raise _problem(where, "%s must be a finite number, got %s" % (key, describe_value(value, 40)))
    return float(number)


def _lines(entry, where):
    value = entry.get("lines")
    if value is None:
        return DEFAULT_METRIC_LINES
    number = value
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_METRIC_LINES:
        raise _problem(where, "lines must be an integer from 1 to %d, got %s" % (MAX_METRIC_LINES, describe_value(value, 40)))
    return number


def _regex(entry, where):
    text = _text(entry, "regex", where)
    if text is None:
        return None
    if len(text) > MAX_REGEX_CHARS:
        raise _problem(where, "regex is %d characters long, at most %d" % (len(text), MAX_REGEX_CHARS))
    try:
        compiled = re.compile(text)
    except (re.error, OverflowError, RecursionError) as error:
        raise _problem(where, "regex %s does not compile: %s" % (repr(label(text, 80)), error)) from None
    if compiled.groups != 1:
        raise _problem(
            where,
            "regex %s has %d groups: it needs exactly one, the group that captures the number (write other groups as (?:...))"
            % (repr(label(text, 80)), compiled.groups),
        )
    return text


def check_metric(entry, index, has_baseline):
    """One entry of ``metrics`` as a :class:`Metric`; ``ConnectionConfigError`` naming ``metrics[index]`` and the key."""
    where = "metrics[%d]" % index
    if not isinstance(entry, dict):
        raise ConnectionConfigError("%s must be a dict with at least a name, got %s" % (where, describe_value(entry, 40)))
    found = unknown_names(list(entry), list(METRIC_ENTRY_OPTIONS))
    if found:
        raise _problem(where, unknown_text(found, "key"))
    name = _text(entry, "name", where)
    if name is None:
        raise _problem(where, "name is required: the metric's name, as the item reports it (val_accuracy)")
    if not METRIC_NAME.match(name):
        raise _problem(where, "name %s must be 1 to 128 printable characters, without leading or trailing spaces" % describe_value(name, 40))
    where = "%s (%s)" % (where, name)
    source = _choice(entry, "source", where, METRIC_SOURCES, "auto")
    regex = _regex(entry, where)
    if source == "log" and regex is None:
        raise _problem(where, "source log needs regex, a regular expression with one group that captures the number (val_accuracy[=:] *([0-9.eE+-]+))")
    if regex is not None and source in ("v1", "ft_metrics"):
        raise _problem(where, "regex is read by source log only (or auto on a v2 job): set source: log, or remove regex")
    task = _text(entry, "task", where)
    if task is not None and not diagnostics.TASK_ID.fullmatch(task):
        raise _problem(where, "task %s is not a task name such as worker-0" % describe_value(task, 40))
    if task is not None and source in ("v1", "ft_metrics"):
        raise _problem(where, "task names the log a source log reads: set source: log, or remove task")
    group = _choice(entry, "group", where, FT_METRIC_GROUPS, None)
    if group is not None and source in ("v1", "log"):
        raise _problem(where, "group picks an ft-metrics series: set source: ft_metrics (or auto), or remove group")
    bounds = dict((key, _bound(entry, key, where)) for key in METRIC_BOUNDS)
    if bounds["min"] is not None and bounds["max"] is not None and bounds["min"] > bounds["max"]:
        raise _problem(where, "min %s is above max %s: no value can meet both" % (_number_text(bounds["min"]), _number_text(bounds["max"])))
    for key in IMPROVEMENT_BOUNDS:
        if bounds[key] is not None and not has_baseline:
            raise _problem(where, "%s compares with a baseline job: set baseline (the model in production), or remove %s" % (key, key))
    return Metric(
        index,
        name,
        source,
        regex,
        task,
        _lines(entry, where),
        _choice(entry, "pick", where, METRIC_PICKS, "last"),
        group,
        _choice(entry, "goal", where, METRIC_GOALS, "max"),
        bounds,
    )


def check_baseline(value, candidates=()):
    """``baseline`` as a :class:`Baseline`; ``ConnectionConfigError`` naming ``baseline.<key>`` when it selects no job a GET
    or a search can find.  ``candidates`` (the call's job keys, when known before any request) may not include it."""
    if not isinstance(value, dict):
        raise ConnectionConfigError(
            "baseline must be a dict (training_job_id, job_id with version_id, or name and/or tags), got %s" % describe_value(value, 40)
        )
    found = unknown_names(list(value), list(BASELINE_OPTIONS))
    if found:
        raise _problem("baseline", unknown_text(found, "key"))
    given = dict((key, entry) for key, entry in value.items() if entry is not None and key != "required")
    required = value.get("required")
    if required is None:
        required = True
    elif not isinstance(required, bool):
        try:
            required = to_bool(required, "baseline.required", "baseline")
        except ConnectionConfigError:
            raise ConnectionConfigError("baseline.required must be a boolean (true or false), got %s" % describe_value(required, 40)) from None
    # Checked whatever the baseline selects (the module gives its default to every baseline); a tag search walks it.
    max_age_days = check_max_age_days(given.get("max_age_days"))
    if "record" in given or "record_key" in given:
        return _record_baseline(given, required)
    tags = parse_tags(given.get("tags"), "baseline.tags")
    searched = [key for key in ("name", "tags") if key in given and (key != "tags" or tags)]
    ids = [key for key in ("training_job_id", "job_id", "version_id") if key in given]
    if searched and ids:
        raise _problem(
            "baseline",
            "%s and %s are mutually exclusive: a baseline is one job, or a search of which the newest Completed job is taken"
            % (", ".join("baseline." + key for key in ids), " and ".join("baseline." + key for key in searched)),
        )
    workspace_id = check_workspace_id(given.get("workspace_id"), "baseline.workspace_id")
    if workspace_id is not None and not searched:
        raise _problem("baseline", "baseline.workspace_id refines a search: give baseline.name or baseline.tags")
    if searched:
        name = given.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise _problem("baseline", "baseline.name must be a job name, got %s" % describe_value(name, 40))
        return Baseline(search=Search(name=name, tags=tags, workspace_id=workspace_id, phases=(COMPLETED,)), required=required, max_age_days=max_age_days)
    if "training_job_id" in given:
        if "job_id" in given or "version_id" in given:
            raise _problem("baseline", "baseline.training_job_id and baseline.job_id are mutually exclusive")
        key = v2_key(check_job_id(given["training_job_id"], "baseline.training_job_id"))
    elif "job_id" in given or "version_id" in given:
        key = v1_selection_key(given, "baseline.")
    else:
        raise ConnectionConfigError(
            "baseline selects no job: give baseline.training_job_id, baseline.job_id with baseline.version_id, or baseline.name and/or "
            "baseline.tags (a search, of which the newest Completed job that is not a candidate is taken)"
        )
    baseline = Baseline(key=key, required=required)
    check_candidates(baseline, candidates)
    return baseline


def check_candidates(baseline, candidates):
    """A baseline given by its key must not be one of ``candidates`` (the call's job keys, when its selection names them):
    a job is never its own baseline."""
    if baseline is not None and baseline.key is not None and baseline.key in set(candidates):
        raise _problem("baseline", "%s is also a job this call selects: a job is never its own baseline" % name_key(baseline.key))


def _record_baseline(given, required):
    """``baseline: {record: PATH}`` as a :class:`Baseline`: a path, ``name`` (one of the record's jobs), ``record_key``."""
    record = given.get("record")
    if record is None:
        raise _problem("baseline", "baseline.record_key verifies a production record: give baseline.record, its path")
    if not isinstance(record, str) or not record.strip():
        raise _problem("baseline", "baseline.record must be the path of a production record, got %s" % describe_value(record, 40))
    others = [key for key in ("training_job_id", "job_id", "version_id", "tags", "workspace_id") if key in given and (key != "tags" or given[key])]
    if others:
        raise _problem(
            "baseline",
            "baseline.record and %s are mutually exclusive: a production record names its job (baseline.name picks one of its jobs)"
            % ", ".join("baseline." + key for key in others),
        )
    name = given.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise _problem("baseline", "baseline.name must be a job name, got %s" % describe_value(name, 40))
    key = given.get("record_key")
    if key is not None and (not isinstance(key, str) or not key):
        raise _problem("baseline", "baseline.record_key must be a non-empty string (a secret: it is never shown)")
    return Baseline(record=expand_user(record), record_name=name, record_key=key, required=required)


def plan(metrics, baseline=None, candidates=()):
    """The checked ``metrics`` and ``baseline`` as a :class:`Plan`, before any request; ``ConnectionConfigError`` names the
    entry and the key of the first problem.  ``candidates`` are the call's job keys when the selection names them."""
    part = metric_settings(metrics, baseline)
    check_candidates(part.baseline, candidates)
    return Plan(part.metrics, part.baseline)


def metric_settings(metrics, baseline=None):
    """The checked ``metrics`` and ``baseline`` as ``MetricSettings`` (immutable: a tuple of :class:`Metric`, each with the
    index of its regex among the distinct ones, and a :class:`Baseline` or None); ``ConnectionConfigError`` names the entry
    and the key of the first problem."""
    if metrics is None:
        metrics = []
    if not isinstance(metrics, list):
        raise ConnectionConfigError("metrics must be a list of dicts (each with at least a name), got %s" % describe_value(metrics, 40))
    has_baseline = baseline is not None and baseline != {}
    if not metrics and has_baseline:
        raise ConnectionConfigError("baseline is set but metrics is empty: name the metrics to compare with the baseline's")
    checked = [check_metric(entry, index, has_baseline) for index, entry in enumerate(metrics)]
    seen = {}
    for metric in checked:
        if metric.name in seen:
            raise ConnectionConfigError(
                "metrics[%d]: name %s is given twice (also metrics[%d])" % (metric.index, describe_value(metric.name, 40), seen[metric.name])
            )
        seen[metric.name] = metric.index
    patterns = list(dict.fromkeys(metric.regex for metric in checked if metric.regex is not None))
    checked = tuple(metric.with_pattern(patterns.index(metric.regex)) if metric.regex is not None else metric for metric in checked)
    return MetricSettings(checked, check_baseline(baseline) if has_baseline else None)


def bounds(metrics, baseline):
    """The bounds of ``metrics`` as checked (``Plan.bounds``), for a decision record; as given when they cannot be checked
    (the gate closed on them)."""
    if not metrics:
        return []
    try:
        return plan(metrics, baseline).bounds()
    except ConnectionConfigError:
        return metrics


def shown_baseline(baseline):
    """``baseline`` as a decision record shows it: as given, without its ``record_key`` (a secret)."""
    if isinstance(baseline, dict):
        return dict((name, value) for name, value in baseline.items() if name != "record_key")
    return baseline
