# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 58: the settings are immutable once resolved, all through - not only the ``Settings`` object but every part
and what each part holds (the wait's phases, the checked metrics and their bounds, the baseline, the stall check,
the connection, the credentials, the selection and its keys)."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.door.options import resolve
from ansible_collections.modelarts.training.plugins.module_utils.door.selection_checks import select
from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_OPTION

TASK = {
    "region": "cn-north-4",
    "project_id": "0" * 32,
    "access_key": "AK0123456789",
    "secret_key": "SK-SECRET-0123456789",
    "wait": True,
    "wait_for": ["Completed"],
    "fail_on": ["Failed", "Abnormal"],
    "metrics": [{"name": "acc", "source": "log", "regex": "acc=([0-9.]+)", "min": 0.5, "min_improvement": 0.0}],
    "baseline": {"name": "prod", "tags": {"stage": "production"}},
    "stall": {"idle_minutes": 5},
}


def changes(part):
    """Each way of changing ``part`` that must fail: ``(what, callable)``."""
    yield "an attribute", lambda: setattr(part, next(iter(getattr(part, "_fields", None) or getattr(part, "__slots__", ()) or ("x",))), None)
    for name in getattr(part, "_fields", None) or getattr(part, "__slots__", ()):
        value = getattr(part, name)
        if isinstance(value, (list, dict)):
            yield name, (lambda value=value: value.append(1)) if isinstance(value, list) else (lambda value=value: value.update(x=1))


def test_every_part_and_what_it_holds_is_immutable():
    given = dict(TASK)
    settings = resolve([(LEVEL_OPTION, given)], {})
    parts = [settings.service, settings.credentials, settings.waiting, settings.results, settings.stall, select({"training_job_ids": ["a", "b"]})]
    parts += list(settings.results.metrics) + [settings.results.baseline]
    for part in parts:
        for what, change in changes(part):
            with pytest.raises((AttributeError, TypeError)):
                change()
                raise AssertionError("%s of %r could be changed" % (what, type(part).__name__))
    assert settings.waiting.wait_for == ("Completed",) and settings.waiting.fail_on == ("Failed", "Abnormal")
    metric = settings.results.metrics[0]
    with pytest.raises(TypeError):
        metric.bounds["min"] = 0.0  # the bounds are a read-only mapping
    assert metric.bounds["min"] == 0.5 and metric.pattern == 0
    with pytest.raises(AttributeError):
        settings.waiting = None
    keys = select({"training_job_ids": ["a", "b"]}).keys
    with pytest.raises(TypeError):
        keys.append("c")
    assert keys == ["a", "b"]
    # What the task gave is left as it was: the parts hold their own values.
    given["metrics"][0]["min"] = 0.99
    assert settings.results.metrics[0].bounds["min"] == 0.5
