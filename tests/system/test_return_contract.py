# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module's RETURN documentation is a contract: every key is present exactly when its ``returned:`` says.

The module runs through real ansible-playbook against the emulator in each situation the ``returned:``
conditions distinguish (one job or many, v2 or v1, with and without wait, success, a fail_on phase, a
timeout, an API error, a strict schema failure), and every documented key is checked in every result.
A new ``returned:`` wording must be taught to ``CONDITIONS`` below, so docs and code cannot drift apart.
"""

import json
import os
import re
import uuid

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE = os.path.join(ROOT, "plugins", "modules", "modelarts_training_job_info.py")
COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"
RUNNING = "a1000000-0000-4000-8000-000000000005"
MISSING = "00000000-dead-4000-8000-000000000000"

# returned: wording -> predicate over (situation, item) (item is None for top-level keys)
CONDITIONS = {
    "always": lambda case, item: True,
    "on failure": lambda case, item: case["failed"],
    "when one job was asked for": lambda case, item: case["single"],
    "on an API error": lambda case, item: case.get("api_error", False),
    "when the task failed on a schema error": lambda case, item: case.get("schema_error", False),
    "for v1 jobs": lambda case, item: item.get("api_version") == "v1",
    "when O(wait=true)": lambda case, item: case["wait"],
    "when the job could not be fetched": lambda case, item: case.get("unfetched", False),
    "when O(metrics) is given": lambda case, item: case.get("metrics", False),
}


def documented():
    """The RETURN keys: ``{top-level key: returned}`` and ``{item key: returned}`` for training_jobs' elements."""
    text = open(MODULE).read()
    spec = yaml.safe_load(re.search(r'RETURN = r"""(.*?)"""', text, re.S).group(1))
    top = dict((key, entry["returned"]) for key, entry in spec.items())
    items = dict((key, entry["returned"]) for key, entry in spec["training_jobs"]["contains"].items())
    return top, items


CASES = [
    ("one v2 job", {"training_job_id": COMPLETED}, dict(single=True, wait=False, failed=False)),
    ("one v1 job", {"job_id": 2001, "version_id": 1}, dict(single=True, wait=False, failed=False)),
    (
        "many jobs waited for",
        {"training_job_ids": [COMPLETED], "v1_jobs": [{"job_id": 2001, "version_id": 1}], "wait": True},
        dict(single=False, wait=True, failed=False),
    ),
    ("by name", {"name": "phase-completed"}, dict(single=False, wait=False, failed=False)),
    ("fail_on phase", {"training_job_id": FAILED, "wait": True, "wait_timeout": 30}, dict(single=True, wait=True, failed=True)),
    ("timeout", {"training_job_id": RUNNING, "wait": True, "wait_timeout": 0}, dict(single=True, wait=True, failed=True)),
    ("not found", {"training_job_id": MISSING}, dict(single=True, wait=False, failed=True, api_error=True, unfetched=True)),
    ("two not found", {"training_job_ids": [MISSING, MISSING.replace("dead", "beef")]}, dict(single=False, wait=False, failed=True, unfetched=True)),
    ("strict schema failure", "drifted", dict(single=True, wait=False, failed=True, schema_error=True, unfetched=True)),
    ("with metrics", {"training_job_ids": [COMPLETED, RUNNING], "metrics": [{"name": "accuracy"}]}, dict(single=False, wait=False, failed=False, metrics=True)),
    (
        "metrics failing a wait",
        {"training_job_id": COMPLETED, "wait": True, "metrics": [{"name": "accuracy", "min": 0.5}]},
        dict(single=True, wait=True, failed=True, metrics=True),
    ),
]


@pytest.mark.parametrize("name,args,case", CASES, ids=[case[0] for case in CASES])
def test_every_documented_key_is_there_exactly_when_documented(emulator, run_playbook, tmp_path, name, args, case):
    if args == "drifted":
        job = emulator.add_job(id=str(uuid.uuid4()), name="contract-drifted", phase="Completed")
        emulator.add_fault(type="drift", mode="wrong_types", paths=["status.duration"], count=-1, job=job)
        args = {"training_job_id": job}
    out = tmp_path / "result.json"
    task = dict(emulator.connection("aksk"), wait_sleep=1, **args)
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"name": name, "modelarts.training.modelarts_training_job_info": task, "register": "result", "ignore_errors": True},
                {"name": "save", "ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": str(out), "mode": "0600"}},
            ],
        }
    ]
    run = run_playbook(plays)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(out.read_text())
    assert bool(result.get("failed")) == case["failed"], result.get("msg")
    top, item_keys = documented()
    for key, returned in top.items():
        assert returned in CONDITIONS, "teach CONDITIONS the returned: wording %r" % returned
        assert (key in result) == CONDITIONS[returned](case, None), "%s: top-level %s (returned: %s)" % (name, key, returned)
    assert result["training_jobs"], name
    for item in result["training_jobs"]:
        for key, returned in item_keys.items():
            assert returned in CONDITIONS, "teach CONDITIONS the returned: wording %r" % returned
            assert (key in item) == CONDITIONS[returned](case, item), "%s: item key %s (returned: %s)" % (name, key, returned)
