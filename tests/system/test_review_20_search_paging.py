# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 20, item 15: a name shared by more than one page of jobs, under either reading of the search's ``offset``.

The SDK's model documents ``offset`` of ``POST /v2/{project_id}/training-job-searches`` as a page
index; an older edition of the API reference calls it an item offset.  The emulator serves either
(``search_offset``), and the module must report each of the 120 jobs exactly once under both: read
as item offsets, the old paging answered 52 jobs (offsets 0, 1 and 2 overlap) and missed the rest.
"""

import json

import pytest

NAME = "review20-paging-shared"
COUNT = 120  # more than two pages of 50


@pytest.fixture
def shared_name_jobs(emulator):
    """120 Completed jobs named NAME in the session's emulator; the emulator is reset afterwards (settings included)."""
    emulator.reset()
    added = emulator.add_jobs([{"name": NAME, "count": COUNT, "phase": "Completed"}])["added"]
    yield [job["id"] for job in added]
    emulator.reset()


@pytest.mark.parametrize("reading", ["page", "item"])
def test_a_name_over_three_pages_gives_every_job_once(emulator, shared_name_jobs, run_playbook, tmp_path, reading):
    emulator.settings(search_offset=reading)
    emulator.clear_requests()
    out = tmp_path / "jobs.json"
    playbook = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "every job of the nightly name",
                    "modelarts.training.modelarts_training_job_info": dict(emulator.connection("aksk"), name=NAME),
                    "register": "nightly",
                },
                {
                    "name": "keep their ids",
                    "ansible.builtin.copy": {"content": "{{ nightly.training_jobs | map(attribute='id') | list | to_json }}", "dest": str(out)},
                },
                {"name": "count", "ansible.builtin.debug": {"msg": "JOBS={{ nightly.training_jobs | length }}"}},
            ],
        }
    ]
    result = run_playbook(playbook)
    assert result.returncode == 0, result.stdout[-3000:]
    ids = json.loads(out.read_text())
    assert len(ids) == COUNT and sorted(ids) == sorted(shared_name_jobs), "JOBS=%d, distinct %d" % (len(ids), len(set(ids)))
    searches = [entry for entry in emulator.requests() if "training-job-searches" in entry["path"]]
    assert 3 <= len(searches) <= 4, "a few pages, not one request per job"
