# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 58: the settings are immutable once resolved, all through - the ``Settings`` object, the door's own view of
its values, every part and whatever each part holds, to the last nested object (the wait's phases, the checked metrics
and their bounds, the baseline and its search, the stall check, the connection, the credentials, the selection, its
keys and its search)."""

from __future__ import annotations

from types import MappingProxyType

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
    "details_paths": ["status.phase"],
    "metrics": [{"name": "acc", "source": "log", "regex": "acc=([0-9.]+)", "min": 0.5, "min_improvement": 0.0}],
    "baseline": {"name": "prod", "tags": {"stage": "production"}},
    "stall": {"idle_minutes": 5},
}
SCALARS = (str, int, float, bool, type(None), bytes)


def fields(value):
    """The names of the values ``value`` holds as attributes (a namedtuple's fields, a frozen object's slots)."""
    names = list(getattr(value, "_fields", ()))
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [name for name in slots if not name.startswith("__")]
    return [name for name in dict.fromkeys(names) if hasattr(value, name)]


def mutable_places(value, where, seen=None):
    """Every place in ``value`` that can be changed: ``["where: how", ...]`` (empty when it is immutable all through)."""
    seen = set() if seen is None else seen
    if isinstance(value, SCALARS) or id(value) in seen:
        return []
    seen.add(id(value))
    found = []
    if isinstance(value, list):
        try:
            value.append(None)
        except TypeError:
            pass
        else:
            value.pop()
            found.append("%s: a list that takes an append" % where)
        return found + [place for index, item in enumerate(value) for place in mutable_places(item, "%s[%d]" % (where, index), seen)]
    if isinstance(value, (dict, set)):
        return ["%s: a %s" % (where, type(value).__name__)]
    if isinstance(value, MappingProxyType):
        return [place for key, item in value.items() for place in mutable_places(item, "%s[%r]" % (where, key), seen)]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return [place for index, item in enumerate(value) for place in mutable_places(item, "%s[%d]" % (where, index), seen)]
    names = fields(value)
    if not names and hasattr(value, "__dict__"):
        return ["%s: a %s with a __dict__" % (where, type(value).__name__)]
    for name in names:
        try:
            setattr(value, name, getattr(value, name))
        except (AttributeError, TypeError):
            pass
        else:
            found.append("%s.%s can be set" % (where, name))
        found += mutable_places(getattr(value, name), "%s.%s" % (where, name), seen)
    return found


def test_the_check_sees_a_change_deep_inside():
    """The check can fail: a list, a dict, a settable attribute, each found where it is nested."""

    class Loose(object):
        __slots__ = ("inner",)

        def __init__(self, inner):
            self.inner = inner

    assert mutable_places(Loose((1, MappingProxyType({"a": [2]}))), "x") == ["x.inner can be set", "x.inner[1]['a']: a list that takes an append"]
    assert mutable_places((1, {"b": 2}), "y") == ["y[1]: a dict"]


def test_every_part_and_what_it_holds_is_immutable_all_through():
    given = dict(TASK)
    settings = resolve([(LEVEL_OPTION, given)], {})
    selection = select({"name": "train", "tags": {"team": "vision"}, "latest": True})
    found = []
    for name in ("service", "credentials", "waiting", "results", "stall"):
        found += mutable_places(getattr(settings, name), "settings." + name)
    for name in ("fail_on", "wait_for", "details_paths", "max_concurrency", "validate", "connection", "origins"):
        found += mutable_places(getattr(settings, name), "settings." + name)
    found += mutable_places(selection, "selection") + mutable_places(select({"training_job_ids": ["a", "b"]}), "selection")
    assert not found, "parts that can be changed: %s" % "; ".join(found)
    with pytest.raises(AttributeError):
        settings.waiting = None
    assert settings.results.baseline.search.name == "prod" and settings.results.metrics[0].pattern == 0
    # The parts hold their own values: a change to what the task gave reaches none of them.
    given["metrics"][0]["min"] = 0.99
    given["fail_on"].append("Terminated")
    assert settings.results.metrics[0].bounds["min"] == 0.5 and settings.fail_on == ["Failed", "Abnormal"]
