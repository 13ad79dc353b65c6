# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a newcomer met (issue 29): misspelt options that were dropped, and a single id where a list is expected.

* A lookup keyword the lookup does not know (``auth_tokn``, ``wait_timout``) fails at once, naming the
  keyword and the closest known one; it used to be dropped (the job was read with the runner's AK/SK, the
  wait took the default 3600 s).  The event source's arguments say the same.
* A ``training_job_gate_*`` variable the role does not define gets a warning naming it and the variable
  it probably meant.
* ``-e training_job_ids=<id>`` on the shipped gate playbook and ``training_job_gate_ids: <id>`` on the role
  are one id (or a comma-separated list): the gate used to count the characters of the string.
"""

import asyncio
import os
import subprocess
import sys

import pytest

from eda_helpers import connection_args, load_source

BIN = os.path.dirname(sys.executable)
ROLE = "modelarts.training.training_job_gate"
COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"


def _lookup_play(expression):
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"name": "Read the job", "ansible.builtin.debug": {"msg": "RESULT={{ %s }}" % expression}}],
        }
    ]


@pytest.mark.parametrize(
    "keywords, unknown, meant",
    [
        ("auth_tokn='x'", "auth_tokn", "auth_token"),
        ("wait=true, wait_timout=2", "wait_timout", "wait_timeout"),
        ("feild='phase'", "feild", "field"),
    ],
)
def test_lookup_refuses_a_misspelt_keyword(emulator, run_playbook, keywords, unknown, meant):
    # The runner's AK/SK would read the job: the misspelt keyword must not be dropped in silence.
    expression = "lookup('modelarts.training.training_job', '%s', %s)" % (COMPLETED, keywords)
    result = run_playbook(_lookup_play(expression), env=emulator.env("aksk"), verbosity=3)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert '"msg": "RESULT=' not in result.stdout, output
    assert "unknown keyword %s (did you mean %s?)" % (unknown, meant) in output, output
    assert "Traceback" not in output, output


def test_lookup_names_every_unknown_keyword_even_without_a_close_one(emulator, run_playbook):
    expression = "lookup('modelarts.training.training_job', '%s', colour='blue', auth_tokn='x')" % COMPLETED
    result = run_playbook(_lookup_play(expression), env=emulator.env("aksk"))
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "unknown keywords auth_tokn (did you mean auth_token?), colour" in output, output


def test_lookup_still_takes_its_documented_keywords(emulator, run_playbook):
    expression = "lookup('modelarts.training.training_job', '%s', field='phase', wait=true, wait_timeout=30, validate='strict')" % COMPLETED
    result = run_playbook(_lookup_play(expression), env=emulator.env("aksk"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout


def test_event_source_names_the_argument_it_probably_meant(emulator, collection_root):
    src = load_source(collection_root)
    args = dict(connection_args(emulator), training_job_ids=[COMPLETED], intervall=3)
    with pytest.raises(src["SourceConfigError"], match=r"unknown argument intervall \(did you mean interval\?\)"):
        asyncio.run(asyncio.wait_for(src["main"](asyncio.Queue(), args), 30))


def _role_play(role_vars):
    return [
        {
            "name": "Deploy the model",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"name": "Gate on the training job", "ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars},
                {"name": "Deploy", "ansible.builtin.debug": {"msg": "GATE_OPENED={{ modelarts_training_jobs | map(attribute='phase') | join(',') }}"}},
            ],
        }
    ]


def test_role_warns_about_a_variable_it_does_not_define(emulator, run_playbook):
    role_vars = {"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1, "training_job_gate_timout": 30}
    result = run_playbook(_role_play(role_vars), env=emulator.env("aksk"))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "GATE_OPENED=Completed" in result.stdout, output
    warnings = [line for line in output.splitlines() if line.startswith("[WARNING]") and "training_job_gate_timout" in line]
    assert len(warnings) == 1, output
    assert "did you mean training_job_gate_timeout?" in warnings[0], output


def test_role_warns_about_a_misspelt_variable_from_extra_vars(emulator, run_playbook):
    # Not only the include_role vars: the role checks every training_job_gate_* variable in scope.
    play = _role_play({"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1})
    result = run_playbook(play, extra_vars={"training_job_gate_fail_onn": []}, env=emulator.env("aksk"))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "training_job_gate_fail_onn (did you mean training_job_gate_fail_on?)" in output, output


def test_role_is_quiet_about_its_own_variables(emulator, run_playbook):
    # Two gates in one play: the facts and the result the first one set (messages, failures) are the role's own.
    play = _role_play({"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1})
    second = dict(play[0]["tasks"][0], vars={"training_job_gate_ids": [COMPLETED], "training_job_gate_fact": "training_job_gate_opened"})
    play[0]["tasks"].insert(1, second)
    result = run_playbook(play, env=emulator.env("aksk"))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[WARNING]" not in output, output


@pytest.mark.parametrize(
    "ids, opened, headline",
    [
        (COMPLETED, True, None),
        ("%s, %s" % (COMPLETED, COMPLETED), True, None),
        (FAILED, False, "closed: 1 of 1 training jobs not Completed"),
        ("%s,%s" % (COMPLETED, FAILED), False, "closed: 1 of 2 training jobs not Completed"),
    ],
)
def test_role_takes_a_string_as_one_id_or_a_comma_separated_list(emulator, run_playbook, ids, opened, headline):
    result = run_playbook(_role_play({"training_job_gate_ids": ids, "training_job_gate_poll": 0.1, "training_job_gate_timeout": 30}), env=emulator.env("aksk"))
    output = result.stdout + result.stderr
    if opened:
        assert result.returncode == 0, output
        assert "GATE_OPENED=Completed" in result.stdout, output
    else:
        assert result.returncode != 0, output
        assert headline in output, output


def test_shipped_gate_playbook_takes_one_id_on_the_command_line(emulator, ansible_env, collection_root, tmp_path):
    playbook = os.path.join(collection_root, "ansible_collections", "modelarts", "training", "playbooks", "gate_deployment.yml")
    command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", playbook]
    command += ["-e", "training_job_ids=%s" % COMPLETED, "-e", "release_name=r29", "-e", "gate_poll=0.1", "-vvv"]
    env = dict(ansible_env, TMPDIR=str(tmp_path), **emulator.env("aksk"))
    result = subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "closed:" not in output, output
    release = tmp_path / "modelarts-releases" / "release-r29.json"
    assert COMPLETED in release.read_text(), output


def test_module_takes_a_string_as_one_id_or_a_comma_separated_list(emulator, run_playbook):
    # The module's training_job_ids is a list option: Ansible splits a string at commas, the door strips each id.
    task = {
        "name": "Read the jobs",
        "modelarts.training.modelarts_training_job_info": {"training_job_ids": "%s, %s" % (COMPLETED, FAILED)},
        "register": "jobs",
    }
    show = {"name": "Show", "ansible.builtin.debug": {"msg": "PHASES={{ jobs.training_jobs | map(attribute='phase') | join(',') }}"}}
    result = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": [task, show]}], env=emulator.env("aksk"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PHASES=Completed,Failed" in result.stdout, result.stdout
