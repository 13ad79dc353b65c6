# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 57, item 1 (and the record side of items 4 and 5): ``baseline: {record: PATH}`` - the model in production as
the gate that deployed it recorded it - in the user's shape.

``ansible-playbook`` against the emulator: a production record written as a user writes one (the module's result
through the filters ``gate_record`` and ``promote_record``, with a key), then a gate on later runs against it - the
module both ways and the lookup; every bad record fails closed naming the file; only a record path that does not
exist yet is skipped by ``required: false``; the key never shows, even with -vvvv.  The event source reads the record
again in each round that has a completion, so a promotion between two completions is seen.
"""

import asyncio
import hashlib
import hmac
import json
import os
import uuid

import pytest

from conftest import emulator_connection
from plays import ACC, epochs, new_id, play, info, save, run
from eda_helpers import connection_args, load_source, source_events

WAYS = pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
KEY = "rk-%s" % uuid.uuid4().hex
GATE = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]


def promote_tasks(job_ids, dest, key=None, decision="open", promote=True):
    """What a user's play does: gate on ``job_ids``, build the decision record, promote it after the deployment, write it."""
    keyword = ", key=record_key" if key else ""
    record = "gated | modelarts.training.gate_record('%s', messages=['deployed'], selection={'ids': %s}, metrics=%s%s)" % (
        decision,
        json.dumps(job_ids),
        json.dumps(GATE),
        keyword,
    )
    if promote:
        record += " | modelarts.training.promote_record(%s)" % ("record_key" if key else "")
    return [
        info("gate", "gated", training_job_ids=job_ids, wait=True, metrics=[{"name": "val_accuracy", "regex": ACC, "min": 0.5}]),
        {"ansible.builtin.copy": {"dest": str(dest), "mode": "0600", "content": "{{ %s | to_nice_json }}" % record}, "no_log": True},
    ]


def jobs(emulator, **values):
    """Completed jobs named after their key, each with its val_accuracy; created an hour apart in the order given."""
    ids = {}
    specs = []
    for index, (name, value) in enumerate(values.items()):
        ids[name] = new_id()
        specs.append(
            {"id": ids[name], "name": "churn-%s" % name, "phase": "Completed", "created_ago": "%dh" % (len(values) - index), "metric_lines": epochs(0.5, value)}
        )
    emulator.add_jobs(specs)
    return ids


def write_records(run_playbook, emulator, tmp_path, ids):
    """The production records a user's plays write: keyed and unkeyed of prod, closed, and of two jobs."""
    tasks = promote_tasks([ids["prod"]], tmp_path / "keyed.json", key=KEY)
    tasks += promote_tasks([ids["prod"]], tmp_path / "plain.json")
    tasks += promote_tasks([ids["prod"]], tmp_path / "closed.json", decision="closed", promote=False)
    tasks += promote_tasks([ids["prod"], ids["other"]], tmp_path / "two.json")
    tasks.append(save(tmp_path, "gated"))
    run(run_playbook, tmp_path, play(emulator, tasks, {"record_key": KEY}))
    return dict((name, str(tmp_path / ("%s.json" % name))) for name in ("keyed", "plain", "closed", "two"))


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def dump(path, record):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=2)
    return str(path)


@WAYS
def test_a_gate_compares_with_the_promoted_record_opening_on_a_better_run_and_closing_on_a_worse_one(emulator, run_playbook, tmp_path, in_process):
    ids = jobs(emulator, prod=0.86, other=0.7, refused=0.83, worse=0.84, better=0.9)
    records = write_records(run_playbook, emulator, tmp_path, ids)
    keyed = load(records["keyed"])
    assert keyed["decision"] == "open" and keyed["promoted_at"] and keyed["hmac_sha256"] and KEY not in json.dumps(keyed)
    assert oct(os.stat(records["keyed"]).st_mode & 0o777) == "0o600"
    baseline = {"record": records["keyed"], "record_key": KEY}
    tasks = [
        # A refused run is never production: the next worse run is compared with the promoted 0.86, not with 0.83.
        info("worse", "worse", training_job_id=ids["worse"], wait=True, metrics=GATE, baseline=baseline),
        info("better", "better", training_job_id=ids["better"], wait=True, metrics=GATE, baseline=baseline),
        info("plain record, no key", "plain", training_job_id=ids["better"], wait=True, metrics=GATE, baseline={"record": records["plain"]}),
        info(
            "two jobs, one picked by name",
            "picked",
            training_job_id=ids["better"],
            wait=True,
            metrics=GATE,
            baseline={"record": records["two"], "name": "churn-prod"},
        ),
        save(tmp_path, "worse", "better", "plain", "picked"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    worse = results["worse"]
    assert worse["failed"] and worse["baseline_job"]["id"] == ids["prod"]
    assert worse["job_messages"] == [
        "training job %s (churn-worse): val_accuracy is 0.84, improving on the baseline's 0.86 by -0.02 (-2.326%%), less than min_improvement 0 (goal max)"
        % ids["worse"]
    ]
    better = results["better"]
    assert not better["failed"] and better["training_job"]["metrics_ok"] is True, better.get("msg")
    assert better["training_job"]["metrics"]["val_accuracy"]["baseline_value"] == 0.86 and better["baseline_job"]["id"] == ids["prod"]
    assert not results["plain"]["failed"] and results["plain"]["baseline_job"]["id"] == ids["prod"]
    assert not results["picked"]["failed"] and results["picked"]["baseline_job"]["id"] == ids["prod"]
    assert KEY not in output and KEY not in json.dumps(results)


def test_every_bad_record_fails_closed_naming_the_file_and_what_is_wrong(emulator, run_playbook, tmp_path):
    ids = jobs(emulator, prod=0.86, other=0.7, better=0.9)
    records = write_records(run_playbook, emulator, tmp_path, ids)
    plain = load(records["plain"])
    os.symlink(records["plain"], str(tmp_path / "link.json"))
    (tmp_path / "text.json").write_text("{not json", encoding="utf-8")
    edited = json.loads(json.dumps(plain))
    edited["jobs"][0]["metrics"]["val_accuracy"]["value"] = 0.5  # a lower bar, by hand
    dump(tmp_path / "edited.json", edited)
    # Another value than the service holds, with its sha256 computed again (as anyone without a key can).
    other_value = json.loads(json.dumps(plain))
    other_value["jobs"][0]["metrics"]["val_accuracy"]["value"] = 0.5
    other_value["sha256"] = hashlib.sha256(
        json.dumps(dict((k, v) for k, v in other_value.items() if k != "sha256"), sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    dump(tmp_path / "other_value.json", other_value)
    bad = {
        "link": (str(tmp_path / "link.json"), None, "is a symbolic link"),
        "text": (str(tmp_path / "text.json"), None, "is not JSON"),
        "edited": (str(tmp_path / "edited.json"), None, "sha256 does not verify"),
        "closed": (records["closed"], None, "decision is closed, not open"),
        "two": (records["two"], None, "holds 2 jobs: give baseline.name"),
        "other_value": (str(tmp_path / "other_value.json"), None, "is not what was promoted: val_accuracy is 0.86 on the service, 0.5 in the record"),
        "wrong_key": (records["keyed"], "not-the-key", "hmac_sha256 does not verify with record_key"),
        "no_hmac": (records["plain"], KEY, "has no hmac_sha256, and record_key is given"),
    }
    tasks = []
    for name, (path, key, _why) in bad.items():
        baseline = {"record": path, "required": False}  # required: false never opens a record that is there and wrong
        if key:
            baseline["record_key"] = key
        tasks.append(info(name, name, training_job_id=ids["better"], wait=True, metrics=GATE, baseline=baseline))
    tasks.append(info("its own baseline", "own", training_job_id=ids["prod"], wait=True, metrics=GATE, baseline={"record": records["plain"]}))
    tasks.append(save(tmp_path, "own", *bad))
    results, output = run(run_playbook, tmp_path, play(emulator, tasks))
    for name, (path, _key, why) in bad.items():
        result = results[name]
        assert result["failed"], (name, result.get("msg"))
        said = "\n".join(result["job_messages"])  # msg shortens each line; job_messages holds them whole
        assert path in said and why in said, (name, said)
        assert result["training_job"]["metrics_ok"] is False and not result.get("warnings"), name
    own = "\n".join(results["own"]["job_messages"])
    assert results["own"]["failed"] and "a job is never its own baseline" in own and records["plain"] in own
    assert "not-the-key" not in output and KEY not in output


@WAYS
def test_a_record_path_that_does_not_exist_yet_skips_with_required_false_and_fails_with_required_true(emulator, run_playbook, tmp_path, in_process):
    ids = jobs(emulator, first=0.8)
    missing = str(tmp_path / "production" / "churn.json")
    tasks = [
        info("first deployment", "first", training_job_id=ids["first"], wait=True, metrics=GATE, baseline={"record": missing, "required": False}),
        info("required", "required", training_job_id=ids["first"], wait=True, metrics=GATE, baseline={"record": missing}),
        save(tmp_path, "first", "required"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    first = results["first"]
    assert not first["failed"] and first["baseline_job"] is None
    assert any(missing in warning and "does not exist" in warning and "skipped" in warning for warning in first["warnings"]), first.get("warnings")
    required = results["required"]
    assert required["failed"] and missing in required["msg"] and "does not exist" in required["msg"]


def test_the_lookup_compares_with_a_record_and_the_key_never_shows_with_vvvv(emulator, run_playbook, tmp_path):
    ids = jobs(emulator, prod=0.86, other=0.7, worse=0.84, better=0.9)
    records = write_records(run_playbook, emulator, tmp_path, ids)
    connection = emulator_connection(emulator)
    lookup = "{{ query('modelarts.training.training_job', %s, metrics=gate, baseline={'record': path, 'record_key': record_key}, %s) }}"
    keywords = ", ".join("%s=%s" % (name, json.dumps(value)) for name, value in connection.items())
    tasks = [
        {"ansible.builtin.set_fact": {"found": lookup % (json.dumps([ids["worse"], ids["better"]]), keywords)}},
        info(
            "wrong key, -vvvv", "wrong", training_job_id=ids["better"], wait=True, metrics=GATE, baseline={"record": records["keyed"], "record_key": KEY + "-x"}
        ),
        info("right key, -vvvv", "right", training_job_id=ids["better"], wait=True, metrics=GATE, baseline={"record": records["keyed"], "record_key": KEY}),
        save(tmp_path, "found", "wrong", "right"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks, {"gate": GATE, "path": records["keyed"], "record_key": KEY}), verbosity=4)
    by_id = dict((item["id"], item) for item in results["found"])
    assert by_id[ids["worse"]]["metrics_ok"] is False and by_id[ids["better"]]["metrics_ok"] is True
    assert by_id[ids["better"]]["metrics"]["val_accuracy"]["baseline_value"] == 0.86
    assert results["wrong"]["failed"] and "hmac_sha256 does not verify" in results["wrong"]["msg"]
    assert not results["right"]["failed"]
    assert KEY not in output and KEY not in json.dumps(results), "the record key shows"


def test_the_event_source_reads_the_record_again_in_each_round_with_a_completion(collection_root, modelarts_emulator, tmp_path):
    emulator = modelarts_emulator
    src = load_source(collection_root)
    pool = {"pool": uuid.uuid4().hex[:8]}
    prod, first, second = new_id(), new_id(), new_id()
    emulator.add_jobs(
        [
            {"id": prod, "name": "churn-prod", "phase": "Completed", "created_ago": "2d", "metric_lines": epochs(0.86)},
            {
                "id": first,
                "name": "churn-a",
                "created_ago": "5m",
                "tags": pool,
                "metric_lines": epochs(0.9),
                "timeline": [{"phase": "Running", "polls": 2}, "Completed"],
            },
            {
                "id": second,
                "name": "churn-b",
                "created_ago": "4m",
                "tags": pool,
                "metric_lines": epochs(0.88),
                "timeline": [{"phase": "Running", "polls": 12}, "Completed"],
            },
        ]
    )

    def record_of(job_id, value, name):
        """A promoted record as docs/metrics.md checks one: its numbers (0.86) read the same in every JSON tool."""
        item = {"id": job_id, "name": name, "api_version": "v2", "phase": "Completed", "metrics": {"val_accuracy": {"value": value}}, "metrics_ok": True}
        record = {"collection": "modelarts.training", "decision": "open", "jobs": [item], "promoted_at": "2026-07-18T11:00:00Z"}
        text = json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8")
        return dict(record, sha256=hashlib.sha256(text).hexdigest(), hmac_sha256=hmac.new(KEY.encode("utf-8"), text, hashlib.sha256).hexdigest())

    path = dump(tmp_path / "production.json", record_of(prod, 0.86, "churn-prod"))
    promoted = []

    def until(events):
        completed = [event["modelarts"]["training_job"]["id"] for event in events if event["modelarts"]["phase"] == "Completed"]
        if first in completed and not promoted:
            # The rule deployed churn-a (0.9 beat 0.86) and promoted it before churn-b completed.
            dump(tmp_path / "production.json.new", record_of(first, 0.9, "churn-a"))
            os.replace(str(tmp_path / "production.json.new"), path)
            promoted.append(first)
        return second in completed

    metrics = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
    args = dict(connection_args(emulator), tags=pool, interval=0.3, metrics=metrics, baseline={"record": path, "record_key": KEY})
    events = asyncio.run(asyncio.wait_for(source_events(src, args, until), 300))
    done = dict(
        (event["modelarts"]["training_job"]["id"], event["modelarts"]["training_job"]) for event in events if event["modelarts"]["phase"] == "Completed"
    )
    assert done[first]["metrics_ok"] is True and done[first]["metrics"]["val_accuracy"]["baseline_value"] == 0.86
    # churn-b (0.88) beats the 0.86 it would have met before, not the 0.9 promoted since: it is not fit.
    assert done[second]["metrics_ok"] is False and done[second]["metrics"]["val_accuracy"]["baseline_value"] == 0.9
