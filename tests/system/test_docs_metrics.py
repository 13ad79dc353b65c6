# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/metrics.md, "Gate on metrics", runs as it shows (issue 48): each task list and playbook of the page against an
emulator serving the demo jobs, as the page says, and the messages the page quotes are the ones they print."""

import json
import os
import re
import subprocess

import pytest
import yaml

from conftest import BIN, ROOT

PAGE = os.path.join(ROOT, "docs", "metrics.md")
RECORD = "/var/lib/releases/resnet50-gate.json"


def page():
    with open(PAGE) as handle:
        return handle.read()


def blocks(language):
    return re.findall(r"```%s\n(.*?)```" % language, page(), re.S)


@pytest.fixture(scope="module")
def demo():
    from modelarts_emulator.launcher import running_emulator  # pylint: disable=import-outside-toplevel

    with running_emulator(scenario="demo", tls=True) as emu:
        yield emu


def playbook(demo, ansible_env, tmp_path, plays, name):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(plays, sort_keys=False))
    env = dict(ansible_env, **demo.env())
    command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(path)]
    return subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300, check=False)


def task_lists():
    """The page's YAML blocks that are lists of tasks (not a playbook, not a fragment of options)."""
    found = []
    for text in blocks("yaml"):
        data = yaml.safe_load(text)
        if isinstance(data, list) and data and "hosts" not in data[0]:
            found.append(data)
    return found


def test_each_task_list_of_the_page_runs_against_the_demo_jobs(demo, ansible_env, tmp_path):
    lists = task_lists()
    # The first threshold, a fine-tuning job with a v1 job, champion/challenger, the record's check, the lookup.
    assert len(lists) == 5, [entry[0].get("name") for entry in lists]
    record = tmp_path / "record.json"
    text = page().replace(RECORD, str(record))
    failing = "Ship only a model at least as good as production"
    results = {}
    for index, tasks in enumerate(yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)):
        if not (isinstance(tasks, list) and tasks and "hosts" not in tasks[0]):
            continue
        names = [task.get("name") for task in tasks]
        if "Refuse a decision record that was edited" in names:
            continue  # run after the role wrote the record (below)
        for number, task in enumerate(tasks):
            task["register"] = "r%d" % number
            task["ignore_errors"] = task.get("name") == failing
        saved = "{{ [%s] | to_json }}" % ", ".join("r%d" % number for number in range(len(tasks)))
        tasks.append({"ansible.builtin.copy": {"content": saved, "dest": str(tmp_path / ("r%d.json" % index)), "mode": "0600"}})
        run = playbook(demo, ansible_env, tmp_path, [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], "p%d.yml" % index)
        assert run.returncode == 0, (names, (run.stdout + run.stderr)[-3000:])
        results.update(zip(names, json.loads((tmp_path / ("r%d.json" % index)).read_text())))
    assert results["Gate on the candidate's validation accuracy"]["training_job"]["metrics"]["val_accuracy"]["value"] == 0.91
    assert results["The loss of a fine-tuning job"]["training_jobs"][0]["metrics"]["eval_loss"]["value"] == 1.07
    assert results["The accuracy of a legacy v1 job"]["training_job"]["metrics"]["accuracy"] == {
        "value": 0.88,
        "source": "v1",
        "ok": True,
        "problems": [],
        "baseline_value": None,
        "improvement": None,
    }
    assert float(results["The candidate's accuracy"]["msg"]) == 0.91
    unfit = results[failing]
    assert unfit["failed"] and unfit["baseline_job"]["name"] == "resnet50-flowers-train-baseline"
    quoted = [line for line in blocks("text") if line.startswith("1 Completed training job did not meet")]
    assert quoted == [unfit["msg"] + "\n"], unfit["msg"]


def test_the_role_example_closes_on_the_worse_model_and_its_record_checks_both_ways(demo, ansible_env, tmp_path):
    record = tmp_path / "record.json"
    text = page().replace(RECORD, str(record))
    plays = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    role_play = next(play for play in plays if isinstance(play, list) and play and play[0].get("name") == "Deploy a model only when it is fit to ship")
    run = playbook(demo, ansible_env, tmp_path, role_play, "role.yml")
    assert run.returncode != 0
    quoted = next(block for block in blocks("text") if block.startswith("training_job_gate: closed: 1 of 1 training jobs Completed but not fit"))
    for line in quoted.splitlines():
        assert line in run.stdout, line
    assert oct(os.stat(str(record)).st_mode & 0o777) == "0o600"
    # The check the page shows, in Ansible: the decision was closed, so the assert fails on its second line only.
    check = next(play for play in plays if isinstance(play, list) and play and play[0].get("name") == "Refuse a decision record that was edited")
    run = playbook(demo, ansible_env, tmp_path, [{"hosts": "localhost", "gather_facts": False, "tasks": check}], "check.yml")
    assert run.returncode != 0 and '"assertion": "record.decision == \'open\'"' in run.stdout, run.stdout[-2000:]
    # ... and without Ansible.
    console = next(block for block in blocks("console") if "hashlib" in block)
    command = console.splitlines()[0][2:].replace(RECORD, str(record))
    shown = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60, check=True).stdout
    assert shown == console.splitlines()[1] + "\n" == "True\n"
    edited = json.loads(record.read_text())
    edited["decision"] = "open"
    record.write_text(json.dumps(edited))
    assert subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60, check=True).stdout == "False\n"
