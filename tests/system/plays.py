# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks the metric gate's system tests run, built once: jobs' metric lines, a play against the emulator
(its ``module_defaults`` the emulator's connection), the module's task, a task saving registered results, and the run
that reads them back."""

import json
import os
import re
import signal
import subprocess
import time
import uuid

from conftest import BIN, emulator_connection, end_group

ACC = "val_accuracy=([0-9.]+)"


def epochs(*values):
    """A log's metric lines, one an epoch: ``EVAL epoch 1: val_accuracy=0.8100``."""
    return ["EVAL epoch %d: val_accuracy=%.4f" % (index + 1, value) for index, value in enumerate(values)]


def new_id():
    return str(uuid.uuid4())


def play(emulator, tasks, variables=None, **connection):
    """One play on localhost: the emulator's connection (with ``connection`` laid over it) for every module of the
    collection's group, ``variables`` as its vars."""
    built = {"hosts": "localhost", "gather_facts": False}
    if variables:
        built["vars"] = variables
    built["module_defaults"] = {"group/modelarts.training.modelarts": emulator_connection(emulator, **connection)}
    built["tasks"] = tasks
    return [built]


def info(title, register, **options):
    """A ``modelarts_training_job_info`` task whose failure is registered, not fatal."""
    return {"name": title, "modelarts.training.modelarts_training_job_info": options, "register": register, "ignore_errors": True}


def save(tmp_path, *names):
    """A task writing the registered results ``names`` to results.json."""
    content = "{{ {%s} | to_json }}" % ", ".join("'%s': %s" % (name, name) for name in names)
    return {"ansible.builtin.copy": {"content": content, "dest": str(tmp_path / "results.json"), "mode": "0600"}}


def run(run_playbook, tmp_path, plays, in_process=True, timeout=300, env=None, verbosity=0):
    """Run ``plays`` (which must pass) and return what :func:`save` wrote and the output."""
    process = run_playbook(plays, extra_vars={"modelarts_training_in_process": in_process}, timeout=timeout, env=env, verbosity=verbosity)
    output = process.stdout + process.stderr
    assert process.returncode == 0, output[-4000:]
    return json.loads((tmp_path / "results.json").read_text()), output


def kill_during_wait(plays, tmp_path, env, emulator, job_id, how=signal.SIGKILL):
    """Run ``plays`` and kill ``ansible-playbook`` (its whole process group, with ``how``) once the role's wait task
    has started and the module has polled ``job_id``: not timed - the lines and the request come, or the play ended."""
    (tmp_path / "killed.yml").write_text(json.dumps(plays))
    command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(tmp_path / "killed.yml")]
    process = subprocess.Popen(command, env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        seen = []
        for line in process.stdout:
            seen.append(line)
            if re.match(r"^TASK \[.*Wait for the training jobs\]", line):
                break
        assert process.poll() is None, "".join(seen)[-3000:]
        while not [entry for entry in emulator.requests() if job_id in entry.get("path", "")]:
            assert process.poll() is None, "".join(seen)[-3000:]
            time.sleep(0.2)
        os.killpg(process.pid, how)
        process.wait(timeout=120)
    finally:
        end_group(process.pid)
        process.communicate()


def rescued_gate(fact, role_vars, **rescued):
    """A block including the gate role with ``role_vars``: the fact ``fact`` says whether the gate opened and, when it
    did not, its message (and ``rescued``, more values templated in the rescue)."""
    return {
        "name": fact,
        "block": [
            {"ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"}, "vars": role_vars},
            {"ansible.builtin.set_fact": {fact: {"opened": True}}},
        ],
        "rescue": [{"ansible.builtin.set_fact": {fact: dict({"opened": False, "msg": "{{ ansible_failed_result.msg }}"}, **rescued)}}],
    }
