# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Events and task logs (logs.py): what the SDK interop tests do not pin down."""

import pytest

from modelarts_emulator import logs

FAILED = "a1000000-0000-4000-8000-000000000002"
POLLED = "a1000000-0000-4000-8000-000000000010"  # polls-to-completed: each GET of the job is one poll


def path(client, job, rest):
    return "/v2/%s/training-jobs/%s/%s" % (client.project_id, job, rest)


def test_events_filter_by_level_and_page_by_page_index(client):
    everything = client.request("GET", path(client, FAILED, "events"), query=[("limit", "100")]).json()
    levels = [event["level"] for event in everything["events"]]
    assert set(levels) == {"Info", "Warning", "Error"} and everything["order"] == "desc"
    warnings = client.request("GET", path(client, FAILED, "events"), query=[("level", "Warning")]).json()
    assert [event["level"] for event in warnings["events"]] == ["Warning"]
    second = client.request("GET", path(client, FAILED, "events"), query=[("limit", "2"), ("offset", "1")]).json()
    assert second["events"] == everything["events"][2:4]
    oldest_first = client.request("GET", path(client, FAILED, "events"), query=[("order", "asc"), ("limit", "100")]).json()
    assert oldest_first["events"] == list(reversed(everything["events"]))
    assert client.request("GET", path(client, FAILED, "events"), query=[("level", "Debug")]).status_code == 400


def test_aom_reads_forward_from_a_base_line(client):
    answer = client.request("GET", path(client, FAILED, "logs/worker-1"), query=[("lines", "3"), ("order", "asc"), ("base_line", "0")]).json()
    assert (answer["start_line"], answer["end_line"], answer["lines"]) == ("1", "3", 3)
    assert answer["content"].split("\n")[0].startswith("[ModelArts Service Log]Trainer start at ")


def test_an_unknown_task_is_not_found(client):
    response = client.request("GET", path(client, FAILED, "logs/worker-9"), query=[("lines", "3")])
    assert response.status_code == 404 and response.json()["error_code"] == "ModelArts.2778"


def test_reading_events_and_logs_is_not_a_poll(client, emu):
    for _read in range(3):
        assert client.request("GET", path(client, POLLED, "events")).status_code == 200
        client.request("GET", path(client, POLLED, "logs/worker-0"), query=[("lines", "5")])
    assert client.job(POLLED).json()["status"]["phase"] == "Creating", "still the first step of a poll-driven timeline"


def test_aom_forbidden_leaves_the_preview_readable(client, emu):
    job = "e1090000-0000-4000-8000-000000000001"
    emu.add_job(id=job, name="aom-denied", phase="Failed", log={"fault": "aom_forbidden"})
    assert client.request("GET", path(client, job, "logs/worker-0"), query=[("lines", "5")]).status_code == 403
    preview = client.request("GET", path(client, job, "tasks/worker-0/logs/preview")).json()
    assert preview["content"].endswith("[ModelArts Service Log]Training end with return code: 1\n")


@pytest.mark.parametrize("log", [{"colour": "red"}, {"fault": "sometimes"}, {"events_fault": "always"}, {"append": "one line"}])
def test_a_bad_log_mapping_is_refused_naming_the_job(log, emu):
    with pytest.raises(ValueError, match="^log"):
        logs.check_log_spec(log)
    with pytest.raises(Exception, match="bad-log.*log"):
        emu.add_job(id="e1090000-0000-4000-8000-000000000002", name="bad-log", log=log)
