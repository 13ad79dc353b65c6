# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lookup reads options from environment variables, inventory variables and keywords, in that order of precedence.

Lookups run on the controller, so environment variables must be set on the ansible-playbook
process itself: that is what these tests do.
"""

JOB = "a1000000-0000-4000-8000-000000000001"


def _play(expression, play_vars=None):
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": play_vars or {},
            "tasks": [{"ansible.builtin.debug": {"msg": "RESULT={{ %s }}" % expression}}],
        }
    ]


def test_options_from_environment(emulator, run_playbook):
    result = run_playbook(_play("lookup('modelarts.training.training_job', '%s', field='phase')" % JOB), env=emulator.env("aksk"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout


def test_temporary_credentials_from_environment(emulator, run_playbook):
    result = run_playbook(_play("lookup('modelarts.training.training_job', '%s', field='name')" % JOB), env=emulator.env("temporary"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=phase-completed" in result.stdout


def test_variables_win_over_environment(emulator, run_playbook):
    env = emulator.env("aksk")
    env["HUAWEICLOUD_SDK_PROJECT_ID"] = "0" * 32  # wrong on purpose: the variable must win
    result = run_playbook(_play("lookup('modelarts.training.training_job', '%s', field='phase')" % JOB, {"modelarts_project_id": emulator.project_id}), env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout


def test_keywords_win_over_variables(emulator, run_playbook):
    env = emulator.env("aksk")
    result = run_playbook(
        _play(
            "lookup('modelarts.training.training_job', '%s', field='phase', project_id='%s')" % (JOB, emulator.project_id), {"modelarts_project_id": "0" * 32}
        ),
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout


def test_missing_credentials_name_the_variables(emulator, run_playbook):
    env = emulator.env("aksk")
    del env["HUAWEICLOUD_SDK_SK"]
    result = run_playbook(_play("lookup('modelarts.training.training_job', '%s')" % JOB), env=env)
    assert result.returncode != 0
    assert "secret_key (HUAWEICLOUD_SDK_SK) missing" in result.stdout + result.stderr
