# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checkout's module runs end to end from ansible-playbook against the emulator."""

from conftest import emulator_connection


def test_module_from_playbook(emulator, run_playbook):
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "modelarts.training.modelarts_training_job_info": dict(
                        emulator_connection(emulator), training_job_id="a1000000-0000-4000-8000-000000000001"
                    ),
                    "register": "job",
                },
                {"ansible.builtin.debug": {"msg": "PHASE={{ job.training_job.phase }} JSON={{ job.training_job | to_json }}"}},
            ],
        }
    ]
    result = run_playbook(play)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PHASE=Completed" in result.stdout
    assert "phase-completed" in result.stdout
