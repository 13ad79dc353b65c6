# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 20, item 11: the lookup's v1 terms follow the module's rule, met through a playbook.

``int()`` made ``{job_id: 1001.9, version_id: 1}`` job 1001 (another job, read without a word),
``version_id: true`` version 1, and let ``-3`` through to the service.  The lookup now refuses
them before any request with the module's message, naming the term; a templated id (text of
digits) still works.
"""

import pytest

from test_user_patterns import Repo, vaulted_vars

LEGACY_COMPLETED = {"job_id": 1001, "version_id": 1}  # legacy-completed in the integration scenario


@pytest.fixture
def repo(tmp_path, ansible_env):
    return Repo(tmp_path, ansible_env)


def lookup_play(term, **task_vars):
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "read the legacy job",
                    "ansible.builtin.debug": {"msg": "PHASE={{ lookup('modelarts.training.training_job', term, field='phase') }}"},
                    "vars": dict(task_vars, term=term),
                }
            ],
        }
    ]


@pytest.mark.parametrize(
    "term, message",
    [
        ({"job_id": 1001.9, "version_id": 1}, "term 0: job_id must be an integer, got 1001.9"),
        ({"job_id": 1001, "version_id": True}, "term 0: version_id must be an integer, got true"),
        ({"job_id": 1001, "version_id": -3}, "term 0: version_id must not be negative, got -3"),
    ],
)
def test_lookup_refuses_v1_ids_the_module_refuses(emulator, repo, term, message):
    repo.group_vars(*vaulted_vars(emulator))
    emulator.clear_requests()
    result = repo.play(lookup_play(term))
    assert result.returncode != 0, result.stdout[-3000:]
    assert '"msg": "PHASE=' not in result.stdout, result.stdout[-3000:]
    assert "training_job lookup: " + message in result.stdout, result.stdout[-3000:]
    assert not [entry for entry in emulator.requests() if "/versions/" in entry["path"]]


def test_lookup_takes_a_templated_v1_id(emulator, repo):
    # An extra var or a fact is text: "1001" is job 1001.
    repo.group_vars(*vaulted_vars(emulator))
    result = repo.play(lookup_play({"job_id": "{{ legacy_job }}", "version_id": "{{ legacy_version }}"}, legacy_job="1001", legacy_version="1"))
    assert result.returncode == 0, result.stdout[-3000:]
    assert "PHASE=Completed" in result.stdout
