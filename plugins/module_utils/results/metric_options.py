# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options of what a job produced: ``metrics`` entries and ``baseline``, their table (documented by the
modelarts.training.metrics doc fragment), and ``MetricSettings``, the typed part the door checks them into
(``door/metric_checks.py``).  Light on purpose: the door reads this file on every call (its argument specs), while
``metrics.py`` and the door's checks are imported only by a call that gives metrics or a baseline."""

from __future__ import annotations

from collections import namedtuple

# What a job produced (metrics.py reads and judges them; the door imports it only when one of these is given).  The
# values are checked at the door (door/metric_checks.py), entry by entry, whichever entry point gave them: the module's argument spec also
# types them (metrics_argument_spec), the lookup's keywords and the event source's arguments arrive as they were written.
METRIC_SOURCES = ["auto", "v1", "log", "ft_metrics"]
METRIC_PICKS = ["last", "max", "min"]
METRIC_GOALS = ["max", "min"]
FT_METRIC_GROUPS = ["training", "validation", "test"]
DEFAULT_METRIC_LINES = 1000
MAX_METRIC_LINES = 100000
METRIC_BOUNDS = ("min", "max", "min_improvement", "min_relative_improvement")
IMPROVEMENT_BOUNDS = ("min_improvement", "min_relative_improvement")
METRIC_ENTRY_OPTIONS = {
    "name": {"type": "str", "required": True},
    "source": {"type": "str", "choices": METRIC_SOURCES, "default": "auto"},
    "regex": {"type": "str"},
    "task": {"type": "str"},
    "lines": {"type": "int", "default": DEFAULT_METRIC_LINES},
    "pick": {"type": "str", "choices": METRIC_PICKS, "default": "last"},
    "group": {"type": "str", "choices": FT_METRIC_GROUPS},
    "goal": {"type": "str", "choices": METRIC_GOALS, "default": "max"},
    "min": {"type": "float"},
    "max": {"type": "float"},
    "min_improvement": {"type": "float"},
    "min_relative_improvement": {"type": "float"},
}
BASELINE_OPTIONS = {
    "training_job_id": {"type": "str"},
    "job_id": {"type": "int"},
    "version_id": {"type": "int"},
    "name": {"type": "str"},
    "tags": {"type": "dict"},
    "workspace_id": {"type": "str"},
    "required": {"type": "bool", "default": True},
    # A production record (production.py): the job a gate opened on and a deployment promoted; record_key verifies its hmac_sha256.
    "record": {"type": "path"},
    "record_key": {"type": "str", "no_log": True},
    "max_age_days": {"type": "int", "default": 400},
}
# As resolve() reads them: taken from the highest level that gives them, as written (the door's metric_checks.plan checks them).
METRICS_OPTIONS = {
    "metrics": {"type": "raw", "default": []},
    "baseline": {"type": "raw"},
}


class MetricSettings(namedtuple("MetricSettings", ("metrics", "baseline"))):
    """What a call reads from the jobs it selects, as the door checked it (``door/metric_checks.metric_settings``, from the
    highest level that gives ``metrics`` and ``baseline``): ``metrics``, a tuple of ``metrics.Metric``, and ``baseline``, a
    ``metrics.Baseline`` or None.  Immutable all through: the metrics and the baseline cannot be changed either."""

    __slots__ = ()
