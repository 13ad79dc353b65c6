# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""record.py: a gate's decision record, its canonical JSON and the digest that shows it was not edited."""

from __future__ import annotations

import datetime
import hashlib
import json

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks
from ansible_collections.modelarts.training.plugins.module_utils.results import record as record_mod
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import COLLECTION_VERSION

NOW = datetime.datetime(2026, 7, 18, 10, 30, 0, tzinfo=datetime.timezone.utc)
ITEM = {
    "id": "job-1",
    "name": "résumé-model",
    "api_version": "v2",
    "phase": "Completed",
    "phase_history": [{"phase": "Completed", "at": "2026-07-18T10:29:00Z"}],
    "create_time": "2026-07-18T09:00:00Z",
    "start_time": "2026-07-18T09:03:20Z",
    "duration_seconds": 5000.5,
    "details": {"a": "not kept"},
    "metrics": {"acc": {"value": 0.91, "source": "log", "ok": True, "problems": [], "baseline_value": 0.88, "improvement": 0.03}},
    "metrics_ok": True,
}
RESULT = {"training_jobs": [ITEM], "baseline_job": dict(ITEM, id="prod", metrics_ok=None)}


def test_a_record_holds_what_an_audit_asks_and_its_digest_is_over_the_canonical_json():
    checked = metric_checks.bounds([{"name": "acc", "min": 0.9}], {"name": "prod"})
    made = record_mod.decision_record(RESULT, "open", ["open"], {"ids": ["job-1"]}, checked, {"name": "prod"}, now=NOW)
    assert made["decided_at"] == "2026-07-18T10:30:00Z" and made["collection_version"] == COLLECTION_VERSION
    kept = dict((key, ITEM[key]) for key in ("id", "name", "api_version", "phase", "phase_history", "create_time", "metrics", "metrics_ok"))
    assert made["jobs"] == [dict(kept, end_time="2026-07-18T10:26:40Z")]
    assert made["baseline_job"]["id"] == "prod" and "metrics_ok" not in made["baseline_job"] and "details" not in made["baseline_job"]
    assert made["bounds"] == [{"name": "acc", "source": "auto", "pick": "last", "goal": "max", "min": 0.9}]
    assert made["selection"] == {"ids": ["job-1"], "baseline": {"name": "prod"}}
    text = json.dumps(dict((key, value) for key, value in made.items() if key != "sha256"), sort_keys=True, separators=(",", ":"))
    assert made["sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert "\\u00e9" in text, "canonical JSON is ASCII"
    assert record_mod.verify(made) and record_mod.verify(json.loads(json.dumps(made, indent=4)))


@pytest.mark.parametrize("edit", [("decision", "closed"), ("messages", []), ("jobs", [])])
def test_an_edited_record_no_longer_verifies(edit):
    made = record_mod.decision_record(RESULT, "open", ["open"], {}, now=NOW)
    made[edit[0]] = edit[1]
    assert not record_mod.verify(made)


def test_a_gate_refused_before_the_module_ran_has_a_record_too_and_bounds_it_cannot_check_are_kept_as_given():
    made = record_mod.decision_record({}, "closed", ["training_job_gate: no jobs"], {"ids": []}, [{"name": "acc", "regx": "x"}], now=NOW)
    assert made["jobs"] == [] and made["baseline_job"] is None and made["bounds"] == [{"name": "acc", "regx": "x"}]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), object()])
def test_a_value_json_cannot_hold_exactly_is_refused(value):
    with pytest.raises(record_mod.RecordError):
        record_mod.decision_record({"training_jobs": [dict(ITEM, metrics={"acc": {"value": value}})]}, "open", [], {}, now=NOW)
    with pytest.raises(record_mod.RecordError):
        record_mod.decision_record({}, "maybe", [], {}, now=NOW)


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({}, "2026-07-18T10:26:40Z"),  # start_time + status.duration (ms, as duration_seconds), the sub-second part dropped
        ({"phase": "Failed", "duration_seconds": 59.999}, "2026-07-18T09:04:19Z"),
        ({"phase": "Running"}, None),  # not ended: start + duration is only the last read
        ({"start_time": None, "duration_seconds": 0.0, "phase": "Abnormal"}, None),  # never started
        ({"duration_seconds": None}, None),
        ({"duration_seconds": True}, None),
        ({"start_time": "yesterday"}, None),
    ],
)
def test_the_record_gives_the_job_s_own_end_time_where_the_service_tells_it(fields, expected):
    item = dict(ITEM, **fields)
    made = record_mod.decision_record({"training_jobs": [item], "baseline_job": item}, "open", [], {}, now=NOW)
    assert made["jobs"][0]["end_time"] == expected and made["baseline_job"]["end_time"] == expected
    assert record_mod.verify(made)
