# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 57, item 2 (and the role's side of items 5 and 6): the model in production through the gate role - gate,
deploy, promote - in the user's shape.

The newcomer's nightly ``churn-model`` runs: 0.86 is promoted (a first deployment), 0.83 is refused, and 0.84 is
refused too, because production is 0.86 - through the role (``training_job_gate_production``, ``tasks_from: promote``)
and through the shipped rulebook, whose playbook gates, deploys, then promotes.  Every bad production record closes the
gate naming the file; ``tasks_from: promote`` refuses when the gate of the play did not open or its record does not
verify; a refused and a killed run leave no ``open`` decision record, and production unchanged; the record key never
shows, even with -vvvv.

Runs with the ansible-core installed beside the interpreter running it (``BIN``): ``make role-paths-oldest`` runs the
promote paths on the oldest core (ansible-core 2.16).
"""

import json
import os
import subprocess
import sys
import uuid

from plays import kill_during_wait, play, rescued_gate, save
from eda_helpers import run_rulebook

BIN = os.path.dirname(sys.executable)
ROLE = "modelarts.training.training_job_gate"
ACC = "val_accuracy=([0-9.]+)"
KEY = "rk57-%s" % uuid.uuid4().hex
GATE = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]


def epochs(*values):
    return ["EVAL epoch %d: val_accuracy=%.4f" % (index + 1, value) for index, value in enumerate(values)]


def churn_jobs(emulator, *values, name="churn-model"):
    """Completed runs of one name (the nightly run's), oldest first, each with its val_accuracy; their ids."""
    ids = [str(uuid.uuid4()) for _value in values]
    emulator.add_jobs(
        [
            {"id": job, "name": name, "phase": "Completed", "created_ago": "%dh" % (len(values) - index), "metric_lines": epochs(0.5, value)}
            for index, (job, value) in enumerate(zip(ids, values))
        ]
    )
    return ids


def output(result):
    return result.stdout + result.stderr


def load(path):
    with open(str(path), encoding="utf-8") as handle:
        return json.load(handle)


def gate_vars(job_ids, production, record=None, key=True, **more):
    """The role's variables as a user sets them for one nightly run."""
    found = {
        "training_job_gate_ids": job_ids,
        "training_job_gate_metrics": GATE,
        "training_job_gate_production": str(production),
        "training_job_gate_poll": 0.2,
        "training_job_gate_timeout": 60,
    }
    if key:
        found["training_job_gate_record_key"] = "{{ record_key }}"
    if record:
        found["training_job_gate_record"] = str(record)
    found.update(more)
    return found


def gate_deploy_promote(emulator, role_vars, release, key=True):
    """A user's play: gate with the role, deploy (a release manifest), promote with tasks_from: promote."""
    promote_vars = {"training_job_gate_production": role_vars["training_job_gate_production"]}
    if key:
        promote_vars["training_job_gate_record_key"] = "{{ record_key }}"
    tasks = [
        {"name": "Gate", "ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars},
        {
            "name": "Deploy",
            "ansible.builtin.copy": {"dest": str(release), "mode": "0644", "content": "{{ modelarts_training_jobs | map(attribute='id') | list | to_json }}"},
        },
        {"name": "Promote", "ansible.builtin.include_role": {"name": ROLE, "tasks_from": "promote"}, "vars": promote_vars},
    ]
    return play(emulator, tasks, {"record_key": KEY})


# -- the newcomer's sequence ---------------------------------------------------------------------------------------


def test_promote_the_newcomers_sequence_through_the_role(emulator, run_playbook, tmp_path):
    first, refused, worse = churn_jobs(emulator, 0.86, 0.83, 0.84)
    production = tmp_path / "production" / "churn-model.json"
    production.parent.mkdir()
    record = tmp_path / "decision.json"

    # A first deployment: no production record yet, so the baseline is the record path with required: false.
    role_vars = gate_vars([first], production, record, training_job_gate_baseline={"record": str(production), "required": False})
    result = run_playbook(gate_deploy_promote(emulator, role_vars, tmp_path / "release-1.json"), verbosity=4)
    text = output(result)
    assert result.returncode == 0, text[-4000:]
    assert "does not exist" in text and KEY not in text
    promoted = load(production)
    assert promoted["decision"] == "open" and promoted["promoted_at"] and promoted["hmac_sha256"] and promoted["sha256"]
    assert [job["id"] for job in promoted["jobs"]] == [first] and promoted["jobs"][0]["metrics"]["val_accuracy"]["value"] == 0.86
    assert oct(os.stat(str(production)).st_mode & 0o777) == "0o600"
    # The production record is the gate's own decision record, promoted: the same decision, digests again.
    decided = load(record)
    assert dict((k, v) for k, v in promoted.items() if k not in ("promoted_at", "sha256", "hmac_sha256")) == dict(
        (k, v) for k, v in decided.items() if k not in ("sha256", "hmac_sha256")
    )
    assert "training_job_gate: promoted %s (churn-model) to %s" % (first, production) in text
    assert KEY not in json.dumps(promoted) and KEY not in json.dumps(decided)
    kept = production.read_text()

    # 0.83: refused against production's 0.86; nothing deployed, nothing promoted.
    result = run_playbook(gate_deploy_promote(emulator, gate_vars([refused], production, record), tmp_path / "release-2.json"))
    text = output(result)
    assert result.returncode != 0, text[-4000:]
    assert "val_accuracy is 0.83, improving on the baseline's 0.86 by -0.03" in text, text[-4000:]
    assert not (tmp_path / "release-2.json").exists() and production.read_text() == kept
    assert load(record)["decision"] == "closed"

    # 0.84: the run before it was refused, and production is still 0.86: refused (a name search would have shipped it).
    result = run_playbook(gate_deploy_promote(emulator, gate_vars([worse], production, record), tmp_path / "release-3.json"), verbosity=4)
    text = output(result)
    assert result.returncode != 0, text[-4000:]
    assert "val_accuracy is 0.84, improving on the baseline's 0.86 by -0.02 (-2.326%), less than min_improvement 0" in text, text[-4000:]
    assert first in text and KEY not in text
    assert not (tmp_path / "release-3.json").exists() and production.read_text() == kept
    closed = load(record)
    assert closed["decision"] == "closed" and closed["baseline_job"]["id"] == first and closed["hmac_sha256"]


# -- bad production records ----------------------------------------------------------------------------------------


def rescued_gates(emulator, gates, tmp_path):
    """One play: each ``(name, role_vars)`` gate in a block whose rescue keeps its message; the messages saved."""
    tasks = []
    for name, role_vars in gates:
        tasks.append(
            {
                "name": name,
                "block": [{"ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars}],
                "rescue": [{"ansible.builtin.set_fact": {"said": "{{ said | default({}) | combine({%r: ansible_failed_result.msg}) }}" % name}}],
            }
        )
    tasks.append({"ansible.builtin.copy": {"content": "{{ said | default({}) | to_json }}", "dest": str(tmp_path / "said.json"), "mode": "0600"}})
    return play(emulator, tasks, {"record_key": KEY})


def test_every_bad_production_record_closes_the_gate_naming_the_file_promote_never_runs(emulator, run_playbook, tmp_path):
    prod, other, low, better = churn_jobs(emulator, 0.86, 0.7, 0.5, 0.9, name="churn-bad-records")
    keyed, plain, two = tmp_path / "keyed.json", tmp_path / "plain.json", tmp_path / "two.json"
    closed = tmp_path / "closed.json"
    missing = tmp_path / "missing.json"

    def first(path):
        return {"record": str(path), "required": False}

    # The records a user's runs leave: promoted with and without the key, of two jobs, and a closed decision record.
    for ids, path, key in (([prod], keyed, True), ([prod], plain, False), ([prod, other], two, False)):
        role_vars = gate_vars(ids, path, key=key, training_job_gate_baseline=first(path))
        result = run_playbook(gate_deploy_promote(emulator, role_vars, tmp_path / "release.json", key=key))
        assert result.returncode == 0, output(result)[-4000:]
    result = run_playbook(gate_deploy_promote(emulator, gate_vars([low], keyed, closed), tmp_path / "release.json"))
    assert result.returncode != 0 and load(closed)["decision"] == "closed", output(result)[-4000:]

    os.symlink(str(plain), str(tmp_path / "link.json"))
    (tmp_path / "text.json").write_text("{not json", encoding="utf-8")
    edited = load(keyed)
    edited["jobs"][0]["metrics"]["val_accuracy"]["value"] = 0.5  # a lower bar, by hand
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    # Another value than the service holds, its sha256 computed again (as anyone can without a key).
    other_value = load(plain)
    other_value["jobs"][0]["metrics"]["val_accuracy"]["value"] = 0.5
    body = dict((k, v) for k, v in other_value.items() if k != "sha256")
    other_value["sha256"] = __import__("hashlib").sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    (tmp_path / "other_value.json").write_text(json.dumps(other_value))
    bad = {
        "missing": (missing, True, "does not exist"),
        "link": (tmp_path / "link.json", False, "is a symbolic link"),
        "text": (tmp_path / "text.json", False, "is not JSON"),
        "edited": (tmp_path / "edited.json", True, "sha256 does not verify"),
        "closed": (closed, True, "decision is closed, not open"),
        "two": (two, False, "holds 2 jobs"),
        "other_value": (tmp_path / "other_value.json", False, "is not what was promoted"),
        "wrong_key": (keyed, "not-the-key-57", "hmac_sha256 does not verify with record_key"),
        "no_hmac": (plain, True, "has no hmac_sha256"),
    }
    gates = []
    for name, (path, key, _why) in bad.items():
        role_vars = gate_vars([better], path, key=key is True, training_job_gate_record=str(tmp_path / ("%s-decision.json" % name)))
        if isinstance(key, str):
            role_vars["training_job_gate_record_key"] = key
        gates.append((name, role_vars))
    result = run_playbook(rescued_gates(emulator, gates, tmp_path), verbosity=4, timeout=1200)
    text = output(result)
    assert result.returncode == 0, text[-4000:]
    said = load(tmp_path / "said.json")
    for name, (path, _key, why) in bad.items():
        assert name in said, (name, text[-3000:])
        assert str(path) in said[name] and why in said[name], (name, said[name])
        assert said[name].startswith("training_job_gate: closed:"), (name, said[name])
        assert load(tmp_path / ("%s-decision.json" % name))["decision"] == "closed", name
    assert KEY not in text and "not-the-key-57" not in text


# -- tasks_from: promote refuses -----------------------------------------------------------------------------------


def promote_play(emulator, tasks):
    return play(emulator, tasks, {"record_key": KEY})


def promote_task(production, key=True):
    promote_vars = {"training_job_gate_production": str(production)}
    if key:
        promote_vars["training_job_gate_record_key"] = "{{ record_key }}"
    return {"name": "Promote", "ansible.builtin.include_role": {"name": ROLE, "tasks_from": "promote"}, "vars": promote_vars}


def refusal(result):
    lines = [line for line in output(result).splitlines() if "training_job_gate: promote: refused" in line]
    assert result.returncode != 0 and lines, output(result)[-4000:]
    return lines[-1]


def test_promote_refuses_without_an_open_gate_or_a_record_that_verifies(emulator, run_playbook, tmp_path):
    good, bad = churn_jobs(emulator, 0.9, 0.5, name="churn-promote-refusals")
    production = tmp_path / "production.json"

    # No gate ran in this play.
    line = refusal(run_playbook(promote_play(emulator, [promote_task(production)])))
    assert "%s not written: no gate ran in this play" % production in line
    assert not production.exists()

    # The gate closed (rescued: the play goes on to the promote step): nothing is promoted.
    closed_gate = {
        "block": [
            {
                "ansible.builtin.include_role": {"name": ROLE},
                "vars": gate_vars(
                    [bad],
                    production,
                    training_job_gate_baseline={"record": str(production), "required": False},
                    training_job_gate_metrics=[{"name": "val_accuracy", "regex": ACC, "min": 0.8}],
                ),
            }
        ],
        "rescue": [{"ansible.builtin.debug": {"msg": "the deploy step is skipped"}}],
    }
    line = refusal(run_playbook(promote_play(emulator, [closed_gate, promote_task(production)])))
    assert "%s not written: the gate of this play did not open (decision closed)" % production in line, line
    assert not production.exists()

    # An earlier gate of the play opened, a later one closed: the later decision is the one promote sees.
    opened = {
        "ansible.builtin.include_role": {"name": ROLE},
        "vars": gate_vars([good], production, training_job_gate_baseline={"record": str(production), "required": False}),
    }
    line = refusal(run_playbook(promote_play(emulator, [opened, closed_gate, promote_task(production)])))
    assert "did not open (decision closed)" in line and not production.exists()

    # The gate's record changed after the gate decided, or the key differs: it does not verify.
    edit = {"ansible.builtin.set_fact": {"training_job_gate_decision_record": "{{ training_job_gate_decision_record | combine({'messages': ['edited']}) }}"}}
    line = refusal(run_playbook(promote_play(emulator, [opened, edit, promote_task(production)])))
    assert "%s not written: the record cannot be promoted: its sha256 does not verify" % production in line, line
    other_key = dict(promote_task(production), vars={"training_job_gate_production": str(production), "training_job_gate_record_key": "other-key-57"})
    result = run_playbook(promote_play(emulator, [opened, other_key]), verbosity=4)
    line = refusal(result)
    assert "hmac_sha256 does not verify with record_key" in line and not production.exists()
    assert "other-key-57" not in output(result) and KEY not in output(result)

    # In check mode the gate decides for real, but the deployment did not run: nothing is written, and it says so.
    result = run_playbook(promote_play(emulator, [opened, promote_task(production)]), check=True)
    assert result.returncode == 0, output(result)[-4000:]
    assert "check mode: nothing promoted" in output(result) and not production.exists()

    # And the same play for real writes it.
    result = run_playbook(promote_play(emulator, [opened, promote_task(production)]))
    assert result.returncode == 0, output(result)[-4000:]
    assert load(production)["jobs"][0]["id"] == good


# -- a refused and a killed run leave no open record ---------------------------------------------------------------


def rescued_promote(production, fact):
    """A promote step whose refusal is kept in ``fact`` (the play goes on)."""
    return {
        "block": [promote_task(production)],
        "rescue": [{"ansible.builtin.set_fact": {fact: "{{ ansible_failed_result.msg }}"}}],
    }


def test_promote_writes_only_the_production_the_gate_read_and_a_record_once(emulator, run_playbook, tmp_path):
    """A second review: promote checked only that the kept record was open, so the last gate's record (model-y, 0.60,
    compared with prod_y) was written to prod_x, whose next gate then compared with 0.60 - and a later play with no gate
    promoted the same record again to any file."""
    x_job, y_job = churn_jobs(emulator, 0.9, 0.6, name="churn-two-productions")
    prod_x, prod_y, prod_z = tmp_path / "prod_x.json", tmp_path / "prod_y.json", tmp_path / "prod_z.json"

    def first_deployment(job, production):
        return {
            "ansible.builtin.include_role": {"name": ROLE},
            "vars": gate_vars([job], production, training_job_gate_baseline={"record": str(production), "required": False}),
        }

    tasks = [
        first_deployment(x_job, prod_x),
        first_deployment(y_job, prod_y),
        rescued_promote(prod_x, "to_x"),
        promote_task(prod_y),
        rescued_promote(prod_y, "again"),
    ]
    later = {
        "hosts": "localhost",
        "gather_facts": False,
        "vars": {"record_key": KEY},
        "tasks": [rescued_promote(prod_z, "to_z"), save(tmp_path, "to_x", "again", "to_z")],
    }
    result = run_playbook(promote_play(emulator, tasks) + [later])
    assert result.returncode == 0, output(result)[-4000:]
    said = load(tmp_path / "results.json")
    assert "%s not written: the gate of this play read the production record %s" % (prod_x, prod_y) in said["to_x"], said
    assert not prod_x.exists() and load(prod_y)["jobs"][0]["id"] == y_job
    assert "%s not written: no gate ran in this play, or its record was promoted already" % prod_y in said["again"], said
    assert "%s not written: no gate ran in this play, or its record was promoted already" % prod_z in said["to_z"], said
    assert not prod_z.exists() and KEY not in output(result)


def test_a_decision_record_at_the_production_path_is_refused_and_a_check_run_leaves_production(emulator, run_playbook, tmp_path):
    """A second review: with training_job_gate_record the production path, a --check run wrote its in-progress record
    over production (the record is written in check mode too), and every later gate failed on it."""
    first, better = churn_jobs(emulator, 0.8, 0.95, name="churn-same-file")
    production = tmp_path / "production.json"
    role_vars = gate_vars([first], production, training_job_gate_baseline={"record": str(production), "required": False})
    assert run_playbook(gate_deploy_promote(emulator, role_vars, tmp_path / "release-1.json")).returncode == 0
    kept = production.read_bytes()
    tasks = [rescued_gate("gate", gate_vars([better], production, production)), dict(save(tmp_path, "gate"), check_mode=False)]
    for check in (True, False):
        result = run_playbook(promote_play(emulator, tasks), check=check)
        assert result.returncode == 0, output(result)[-4000:]
        gate = load(tmp_path / "results.json")["gate"]
        assert gate["opened"] is False and gate["msg"] == (
            "training_job_gate: training_job_gate_record and training_job_gate_production name the same file, %s: every gate would"
            " write its decision over the model in production; give the decision record a path of its own" % production
        ), gate
        assert production.read_bytes() == kept


def test_promote_path_a_refused_and_a_killed_run_leave_no_open_record(emulator, run_playbook, ansible_env, tmp_path):
    prod, better, best = churn_jobs(emulator, 0.86, 0.9, 0.95, name="churn-killed")
    running = str(uuid.uuid4())
    emulator.add_jobs([{"id": running, "name": "churn-killed", "phase": "Running", "metric_lines": epochs(0.99)}])
    production = tmp_path / "production.json"
    record = tmp_path / "decision.json"
    role_vars = gate_vars([prod], production, record, training_job_gate_baseline={"record": str(production), "required": False})
    assert run_playbook(gate_deploy_promote(emulator, role_vars, tmp_path / "r1.json")).returncode == 0
    # A better run opens against production: its decision record is open, production moves to it.
    result = run_playbook(gate_deploy_promote(emulator, gate_vars([better], production, record), tmp_path / "r2.json"))
    assert result.returncode == 0, output(result)[-4000:]
    assert load(record)["decision"] == "open" and load(production)["jobs"][0]["id"] == better
    kept = production.read_text()

    # Refused by its variables (a misspelt connection option): the decision record is closed, production unchanged.
    refused = gate_vars([better], production, record, training_job_gate_connection={"regoin": "x"})
    result = run_playbook(gate_deploy_promote(emulator, refused, tmp_path / "r3.json"))
    assert result.returncode != 0 and "regoin" in output(result), output(result)[-4000:]
    assert load(record)["decision"] == "closed" and production.read_text() == kept

    # Open again, then killed during the wait of the next run: closed, in progress; production unchanged.
    result = run_playbook(gate_deploy_promote(emulator, gate_vars([best], production, record), tmp_path / "r4.json"))
    assert result.returncode == 0, output(result)[-4000:]
    assert load(record)["decision"] == "open" and load(production)["jobs"][0]["id"] == best
    kept = production.read_text()
    killed = gate_deploy_promote(emulator, gate_vars([running], production, record, training_job_gate_timeout=600), tmp_path / "r5.json")
    kill_during_wait(killed, tmp_path, ansible_env, emulator, running)
    written = load(record)
    assert written["decision"] == "closed" and written["messages"] == ["training_job_gate: closed: in progress (the gate has not decided yet)"]
    assert written["hmac_sha256"] and production.read_text() == kept


# -- the shipped playbook and rulebook: gate, deploy, promote ------------------------------------------------------


def shipped_playbook(ansible_env, emulator, tmp_path, variables, key=KEY):
    command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "modelarts.training.gate_deployment", "-e", json.dumps(variables)]
    env = dict(ansible_env, MODELARTS_GATE_RECORD_KEY=key, **emulator.env())
    return subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300, check=False)


def test_the_shipped_playbook_gates_deploys_and_promotes(emulator, ansible_env, tmp_path):
    first, refused, worse = churn_jobs(emulator, 0.86, 0.83, 0.84, name="churn-shipped")
    production = str(tmp_path / "production.json")
    common = {"release_dir": str(tmp_path / "releases"), "gate_poll": 0.2, "gate_metrics": GATE, "gate_production": production}
    result = shipped_playbook(ansible_env, emulator, tmp_path, dict(common, training_job_ids=[first], gate_baseline={"record": production, "required": False}))
    assert result.returncode == 0, output(result)[-4000:]
    assert load(production)["jobs"][0]["id"] == first and load(production)["hmac_sha256"]
    for job, value in ((refused, "0.83"), (worse, "0.84")):
        result = shipped_playbook(ansible_env, emulator, tmp_path, dict(common, training_job_ids=[job]))
        assert result.returncode != 0, output(result)[-4000:]
        assert "val_accuracy is %s, improving on the baseline's 0.86" % value in output(result), output(result)[-4000:]
        assert load(production)["jobs"][0]["id"] == first
        assert KEY not in output(result)
    assert len(list((tmp_path / "releases").glob("release-*.json"))) == 1


def test_the_newcomers_sequence_through_the_deploy_on_completed_rulebook(emulator, ansible_env, tmp_path):
    first, refused, worse = churn_jobs(emulator, 0.86, 0.83, 0.84, name="churn-rulebook")
    production = str(tmp_path / "production.json")
    env = dict(ansible_env, TMPDIR=str(tmp_path), MODELARTS_GATE_RECORD_KEY=KEY, **emulator.env())
    common = {"poll_interval": 0.3, "stop_when_done": True, "state_file": "", "gate_metrics": GATE, "gate_production": production}
    # The first deployment: no production record yet.
    variables = dict(common, training_job_ids=[first], gate_baseline={"record": production, "required": False})
    result = run_rulebook(env, tmp_path, "modelarts.training.deploy_on_completed", variables, shutdown_delay=60, timeout=120)
    assert result.returncode == 0, output(result)[-4000:]
    assert load(production)["jobs"][0]["id"] == first, output(result)[-4000:]
    # The next nights, one activation each: 0.83, then 0.84 - both refused against production's 0.86.
    for job, value in ((refused, "0.83"), (worse, "0.84")):
        variables = dict(common, training_job_ids=[job])
        result = run_rulebook(env, tmp_path, "modelarts.training.deploy_on_completed", variables, shutdown_delay=60, timeout=120)
        text = output(result)
        assert "val_accuracy is %s, improving on the baseline's 0.86" % value in text, text[-4000:]
        assert load(production)["jobs"][0]["id"] == first
        assert KEY not in text
    releases = list((tmp_path / "modelarts-releases").glob("release-*.json"))
    assert len(releases) == 1 and first in releases[0].read_text()
