# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36, item 5: the role's unknown-variable warning never names a fact the role itself published.

A play gating twice - the nightly run into ``training_job_gate_nightly_jobs``, then the release into the default fact -
used to warn, at the second gate, that ``training_job_gate_nightly_jobs`` is an unknown variable with no effect: the
first gate had published it.  Every fact a gate publishes is now remembered (``training_job_gate_published``) and is the
role's own; a variable the role does not define is still warned about.  And every name the role's tasks set
(``set_fact`` keys, ``register``) is one of its own variables, so no later change brings the warning back.
"""

import os

import yaml

from conftest import emulator_connection

ROLE = "modelarts.training.training_job_gate"
COMPLETED = "a1000000-0000-4000-8000-000000000001"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE_DIR = os.path.join(ROOT, "roles", "training_job_gate")


def gate(**role_vars):
    return {
        "name": "Gate",
        "ansible.builtin.include_role": {"name": ROLE},
        "vars": dict(training_job_gate_ids=[COMPLETED], training_job_gate_poll=0.1, **role_vars),
    }


def warnings(output):
    return [line for line in output.splitlines() if line.startswith("[WARNING]") and "training_job_gate" in line]


def test_a_second_gate_does_not_warn_about_the_facts_the_first_one_published(emulator, run_playbook):
    connection = emulator_connection(emulator)
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": connection},
            "tasks": [
                gate(training_job_gate_fact="training_job_gate_nightly_jobs"),
                gate(training_job_gate_fact="training_job_gate_release_jobs", training_job_gate_cacheable=True),
                gate(),
                {
                    "ansible.builtin.debug": {
                        "msg": "OPENED={{ [training_job_gate_nightly_jobs, training_job_gate_release_jobs, modelarts_training_jobs]"
                        " | map('map', attribute='phase') | map('join') | join(',') }}"
                    }
                },
                # A misspelt option is still warned about, with the published facts in scope.
                gate(training_job_gate_timout=30),
            ],
        }
    ]
    result = run_playbook(play)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "OPENED=Completed,Completed,Completed" in output, output[-4000:]
    found = warnings(output)
    assert len(found) == 1 and "unknown variable training_job_gate_timout (did you mean training_job_gate_timeout?)" in found[0], found


def test_every_name_the_roles_tasks_set_is_one_of_its_own_variables():
    with open(os.path.join(ROLE_DIR, "vars", "main.yml")) as handle:
        own = set(yaml.safe_load(handle)["training_job_gate_own_variables"])
    set_names = set()
    for name in sorted(os.listdir(os.path.join(ROLE_DIR, "tasks"))):
        with open(os.path.join(ROLE_DIR, "tasks", name)) as handle:
            for task in yaml.safe_load(handle):
                if "register" in task:
                    set_names.add(task["register"])
                for key in task.get("ansible.builtin.set_fact") or {}:
                    if key != "cacheable" and "{{" not in key:
                        set_names.add(key)
    assert set_names and set_names <= own, sorted(set_names - own)
    # The one fact whose name is an option: remembered among the published ones.
    assert "training_job_gate_published" in set_names
