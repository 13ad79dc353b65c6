# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 60, items 1 to 4 (the role's part): the gate role run as a newcomer runs it.

* 1: a variable given as ``"{{ x | default(omit) }}"`` is unset everywhere in the role, as a module option is.
* 2: the open line gives each metric's value and the baseline job's id and value; the closed line names the baseline
  job; the module's message for a refused job names it too.
* 3: a misspelt key of ``training_job_gate_metrics`` (or ``training_job_gate_baseline``) is refused in one line, the
  module's way, with the record written; a value of the wrong type is refused naming the variable, the value and the
  type expected - and ``ansible-doc`` still gives every variable's type.
* 4: with wrong credentials the headline counts the job as one that could not be read, not as one not Completed.

Runs with the ansible-core installed beside the interpreter running it (``BIN``): also on the oldest core
(``.venv-core-2.16/bin/python -m pytest tests/system/test_issue_60_role.py``).
"""

import json
import os
import re
import subprocess
import sys
import uuid

import pytest
import yaml

from conftest import emulator_connection

BIN = os.path.dirname(sys.executable)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE = "modelarts.training.training_job_gate"
ACC = r"val_accuracy=([0-9.]+)"


def new_id():
    return str(uuid.uuid4())


@pytest.fixture
def jobs(emulator):
    """A Completed job (val_accuracy 0.87), a worse one (0.80) and the production job (0.86, tagged stage: production)."""
    found = {"better": new_id(), "worse": new_id(), "production": new_id()}
    emulator.add_jobs(
        [
            {
                "id": found["production"],
                "name": "i60-prod",
                "phase": "Completed",
                "created_ago": "2d",
                "tags": {"stage": "i60-production"},
                "metric_lines": ["EVAL epoch 1: val_accuracy=0.86"],
            },
            {"id": found["better"], "name": "i60-better", "phase": "Completed", "metric_lines": ["EVAL epoch 1: val_accuracy=0.87"]},
            {"id": found["worse"], "name": "i60-worse", "phase": "Completed", "metric_lines": ["EVAL epoch 1: val_accuracy=0.80"]},
        ]
    )
    return found


BOUNDED = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
BASELINE = {"tags": {"stage": "i60-production"}}


def output(result):
    return result.stdout + result.stderr


def gate_play(emu, role_vars, connection=None, before=None):
    """The role in a play against ``emu`` (the connection in module_defaults unless given), its variables in the
    include's vars; ``before``: tasks that run first."""
    role_vars = dict({"training_job_gate_poll": 0.2, "training_job_gate_timeout": 30}, **role_vars)
    play = {
        "hosts": "localhost",
        "gather_facts": False,
        "module_defaults": {"group/modelarts.training.modelarts": connection or emulator_connection(emu)},
        "tasks": list(before or []) + [{"name": "Gate", "ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars}],
    }
    return [play]


def read_record(path):
    with open(path) as handle:
        return json.load(handle)


def fatal_lines(text):
    return [line for line in text.splitlines() if line.startswith("fatal:")]


# -- item 1: omit is unset ------------------------------------------------------------------------------------------


def test_a_variable_given_as_omit_is_unset(emulator, run_playbook, tmp_path, jobs):
    record = str(tmp_path / "gate.json")
    role_vars = {
        "training_job_gate_ids": [jobs["better"]],
        "training_job_gate_name": "{{ i60_name | default(omit) }}",
        "training_job_gate_tags": "{{ i60_tags | default(omit) }}",
        "training_job_gate_timeout": "{{ i60_timeout | default(omit) }}",
        "training_job_gate_baseline": "{{ i60_baseline | default(omit) }}",
        "training_job_gate_record": record,
    }
    result = run_playbook(gate_play(emulator, role_vars))
    text = output(result)
    assert result.returncode == 0, text[-3000:]
    assert "not both" not in text and "_OmitType" not in text and "omit_place_holder" not in text
    assert "training_job_gate: open: 1 training job Completed" in text, text[-3000:]
    written = read_record(record)
    assert written["decision"] == "open", written
    # Unset, as the defaults say: no name, no tags, the default timeout.
    assert written["selection"]["name"] is None and written["selection"]["tags"] is None, written["selection"]
    assert written["selection"]["timeout"] == 3600, written["selection"]


def test_omit_inside_a_variable_is_dropped_as_in_a_module_option(emulator, run_playbook, tmp_path, jobs):
    role_vars = {
        "training_job_gate_ids": [jobs["better"]],
        "training_job_gate_metrics": [{"name": "val_accuracy", "regex": ACC, "min": "{{ i60_min | default(omit) }}"}],
    }
    result = run_playbook(gate_play(emulator, role_vars))
    assert result.returncode == 0, output(result)[-3000:]
    assert "val_accuracy 0.87" in output(result), output(result)[-3000:]


# -- item 3: a typo or a wrong type, refused in one line with the record written ------------------------------------


@pytest.mark.parametrize(
    "variable, value, expected",
    [
        (
            "training_job_gate_metrics",
            [{"name": "val_accuracy", "regex": ACC, "min_improvment": 0.01}],
            "training_job_gate: training_job_gate_metrics[0]: unknown key min_improvment (did you mean min_improvement?)",
        ),
        ("training_job_gate_baseline", {"tag": {"stage": "production"}}, "training_job_gate: training_job_gate_baseline: unknown key tag (did you mean tags?)"),
        ("training_job_gate_timeout", "soon", "training_job_gate: training_job_gate_timeout: expected an integer, got string 'soon'"),
        ("training_job_gate_require", ["Complete"], "training_job_gate: training_job_gate_require: expected a list of strings, each one of Creating"),
    ],
    ids=["metrics key", "baseline key", "timeout type", "require choice"],
)
def test_a_wrong_variable_is_refused_in_one_line_and_recorded(emulator, run_playbook, tmp_path, jobs, variable, value, expected):
    record = str(tmp_path / "gate.json")
    role_vars = {"training_job_gate_ids": [jobs["better"]], "training_job_gate_record": record, variable: value}
    if variable == "training_job_gate_metrics":
        role_vars["training_job_gate_baseline"] = BASELINE
    seen = len(emulator.requests())
    result = run_playbook(gate_play(emulator, role_vars))
    text = output(result)
    assert result.returncode != 0
    fatal = fatal_lines(result.stdout)
    assert len(fatal) == 1 and expected in fatal[0], text[-3000:]
    # One line, not the spec dumped: the message is the refusal alone.
    assert len(fatal[0]) < 600 and "argument_spec_data" not in text, fatal
    written = read_record(record)
    assert written["decision"] == "closed" and len(written["messages"]) == 1 and written["messages"][0].startswith(expected), written
    assert not [entry for entry in emulator.requests()[seen:] if jobs["better"] in entry.get("path", "")]


def test_a_wrong_choice_gets_the_closest_one(emulator, run_playbook, tmp_path, jobs):
    result = run_playbook(gate_play(emulator, {"training_job_gate_ids": [jobs["better"]], "training_job_gate_fail_on": ["Failed", "Abnormall"]}))
    assert result.returncode != 0
    assert "Abnormall: did you mean Abnormal" in output(result), output(result)[-3000:]


def test_ansible_doc_gives_every_variable_its_type(ansible_env):
    command = [os.path.join(BIN, "ansible-doc"), "-t", "role", "--json", ROLE]
    result = subprocess.run(command, env=ansible_env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, output(result)[-3000:]
    data = json.loads(result.stdout)
    options = data[ROLE]["entry_points"]["main"]["options"]
    with open(os.path.join(ROOT, "roles", "training_job_gate", "vars", "main.yml")) as handle:
        types = yaml.safe_load(handle)["training_job_gate_types"]
    for name, option in options.items():
        assert option.get("type"), name
        if option["type"] == "raw":
            # The real type is the role's check, and the first line of the description says it.
            assert name in types, name
            first = option["description"][0]
            assert first.startswith("Type %s" % types[name]["type"]), (name, first)
            if types[name].get("elements"):
                assert "of %s" % types[name]["elements"] in first, (name, first)
            for choice in types[name].get("choices", []):
                assert "V(%s)" % choice in first, (name, first)
        else:
            # What ansible-core's validation task checks: a str or a path is never refused, so it runs before the record
            # without harm.
            assert option["type"] in ("str", "path") and "choices" not in option and "elements" not in option, name
    assert set(types) <= set(options)


# -- item 4: a job that could not be read -----------------------------------------------------------------------------


def test_wrong_credentials_say_the_job_could_not_be_read(emulator, run_playbook, tmp_path, jobs):
    connection = dict(emulator_connection(emulator), secret_key="Wrong" + emulator.sk[5:])
    result = run_playbook(gate_play(emulator, {"training_job_gate_ids": [jobs["better"]], "training_job_gate_timeout": 5}, connection=connection))
    text = output(result)
    assert result.returncode != 0
    assert "training_job_gate: closed: 1 of 1 training jobs could not be read" in text, text[-3000:]
    assert "training jobs not Completed" not in text, text[-3000:]


# -- item 2: the numbers on the open and closed lines -----------------------------------------------------------------


def test_the_open_line_gives_the_values_and_the_baseline(emulator, run_playbook, tmp_path, jobs):
    role_vars = {"training_job_gate_ids": [jobs["better"]], "training_job_gate_metrics": BOUNDED, "training_job_gate_baseline": BASELINE}
    result = run_playbook(gate_play(emulator, role_vars))
    text = output(result)
    assert result.returncode == 0, text[-3000:]
    line = re.search(r"training_job_gate: open: .*", text).group(0)
    assert "val_accuracy 0.87" in line, line
    assert "baseline %s (i60-prod) 0.86" % jobs["production"] in line, line


def test_the_closed_line_and_the_job_line_name_the_baseline(emulator, run_playbook, tmp_path, jobs):
    role_vars = {"training_job_gate_ids": [jobs["worse"]], "training_job_gate_metrics": BOUNDED, "training_job_gate_baseline": BASELINE}
    result = run_playbook(gate_play(emulator, role_vars))
    text = output(result)
    assert result.returncode != 0
    headline = re.search(r"training_job_gate: closed: [^\\\n\"]*", text).group(0)
    assert "baseline %s (i60-prod)" % jobs["production"] in headline, headline
    assert "val_accuracy is 0.8, improving on the baseline's 0.86" in text, text[-3000:]


def test_the_modules_message_for_a_refused_job_names_the_baseline(emulator, run_info_task, jobs):
    task = dict(emulator_connection(emulator), training_job_id=jobs["worse"], wait=True, wait_timeout=20, metrics=BOUNDED, baseline=BASELINE)
    result, _process = run_info_task(task)
    assert result["failed"], result
    assert "(baseline training job %s (i60-prod))" % jobs["production"] in result["msg"], result["msg"]
