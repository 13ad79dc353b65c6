# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jobs selected the way teams run them: workspaces, TMS tags, the 31-day window of a tag search, reused names."""

import time

import pytest

from modelarts_emulator.client import ControlError

WS = "0123456789abcdef0123456789abcdef"
DAY_MS = 86400 * 1000


def nightly(n):
    """The id of job ``n`` of the shipped ``nightly`` scenario."""
    return "b1000000-0000-4000-8000-%012d" % n


@pytest.fixture
def scene(emu):
    """The emulator with the shipped nightly scenario."""
    emu.reset(scenario="nightly")
    return emu


def ids(response):
    assert response.status_code == 200, response.text
    return [item["metadata"]["id"] for item in response.json()["items"]]


def refused(response, *words):
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error_code"] == "ModelArts.0101", body
    for word in words:
        assert word in body["error_msg"], body
    return body["error_msg"]


NAME = {"key": "name", "operator": "in", "value": ["nightly-train"]}


def test_a_name_search_sees_the_default_workspace_newest_first(scene, client):
    # A name search has no window: the 40-day-old job is there; the job of the other workspace is not.
    answer = client.search({"filters": [NAME]})
    assert ids(answer) == [nightly(4), nightly(3), nightly(2), nightly(1), nightly(5)]
    assert answer.json()["workspace_id"] == "0"
    phases = [item["status"]["phase"] for item in answer.json()["items"]]
    assert phases == ["Creating", "Failed", "Failed", "Failed", "Completed"]
    # The newest of the reused name is one search of one item.
    assert ids(client.search({"limit": 1, "sort_by": "create_time", "order": "desc", "filters": [NAME]})) == [nightly(4)]


def test_a_search_sees_the_workspace_it_names_and_a_get_any(scene, client):
    answer = client.search({"workspace_id": WS, "filters": [NAME]})
    assert ids(answer) == [nightly(6)] and answer.json()["workspace_id"] == WS
    assert ids(client.search({"workspace_id": "0", "filters": [{"key": "id", "operator": "in", "value": [nightly(6), nightly(3)]}]})) == [nightly(3)]
    doc = client.job(nightly(6))
    assert doc.status_code == 200 and doc.json()["metadata"]["workspace_id"] == WS


def test_tags_every_key_must_match_and_a_key_s_values_are_alternatives(scene, client):
    one = {"tags": [{"key": "pipeline", "values": ["nightly"]}]}
    # 005 is 40 days old (outside the window), 006 in another workspace.
    assert ids(client.search(one)) == [nightly(4), nightly(7), nightly(3), nightly(2), nightly(1)]
    both = {"tags": [{"key": "pipeline", "values": ["nightly"]}, {"key": "team", "values": ["vision"]}]}
    assert ids(client.search(both)) == [nightly(4), nightly(3), nightly(2), nightly(1)]
    either = {"tags": [{"key": "team", "values": ["speech", "vision"]}]}
    assert ids(client.search(either)) == [nightly(4), nightly(8), nightly(7), nightly(3), nightly(2), nightly(1)]
    assert ids(client.search({"tags": [{"key": "team", "values": ["nobody"]}]})) == []
    assert ids(client.search({"tags": [{"key": "owner"}]})) == []


@pytest.mark.parametrize("condition", [{"key": "team"}, {"key": "team", "values": None}, {"key": "team", "values": []}, {"key": "team", "values": [""]}])
def test_a_key_without_values_matches_any_value(scene, client, condition):
    assert ids(client.search({"tags": [condition]})) == [nightly(4), nightly(8), nightly(7), nightly(3), nightly(2), nightly(1)]


def test_name_and_tags_must_both_match(scene, client):
    body = {"filters": [{"key": "name", "operator": "in", "value": ["speech-train"]}], "tags": [{"key": "team", "values": ["vision"]}]}
    assert ids(client.search(body)) == []
    body["tags"] = [{"key": "team", "values": ["speech"]}]
    assert ids(client.search(body)) == [nightly(7)]
    body = {"limit": 2, "offset": 1, "filters": [NAME], "tags": [{"key": "team", "values": ["vision"]}]}
    answer = client.search(body)
    assert ids(answer) == [nightly(2), nightly(1)] and answer.json()["total"] == 4


def test_the_create_time_window_of_a_tag_search(scene, client):
    now = int(time.time() * 1000)
    tags = [{"key": "pipeline", "values": ["nightly"]}]

    def window(start, end):
        return {"tags": tags, "filters": [{"key": "create_time", "operator": "between", "value": [str(start), str(end)]}]}

    assert ids(client.search(window(now - 45 * DAY_MS, now - 14 * DAY_MS))) == [nightly(5)]
    assert ids(client.search(window(now - 31 * DAY_MS, now))) == [nightly(4), nightly(7), nightly(3), nightly(2), nightly(1)]
    refused(client.search(window(now - 31 * DAY_MS - 1, now)), "create_time", "31 days")
    refused(client.search(window(now, now - DAY_MS)), "create_time", "starts after it ends")
    refused(client.search({"tags": tags, "filters": [{"key": "create_time", "operator": "between", "value": ["yesterday", "now"]}]}), "create_time")
    refused(client.search({"tags": tags, "filters": [{"key": "create_time", "operator": "in", "value": [str(now)]}]}), "create_time", "between")
    # Without tags there is no window: the name search of a year.
    body = {"filters": [NAME, {"key": "create_time", "operator": "between", "value": [str(now - 365 * DAY_MS), str(now)]}]}
    assert nightly(5) in ids(client.search(body))


def _keys(n):
    return [{"key": "k%d" % i, "values": ["v"]} for i in range(n)]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"tags": _keys(11)}, ("tags holds 11", "at most 10")),
        ({"tags": [{"key": "team"}, {"key": "team", "values": ["vision"]}]}, ("tags[1].key", "twice")),
        ({"tags": [{"key": "team", "values": ["v%d" % i for i in range(11)]}]}, ("tags[0].values holds 11", "at most 10")),
        ({"tags": [{"key": "team", "values": ["vision", "vision"]}]}, ("tags[0].values", "twice")),
        ({"tags": [{"key": ""}]}, ("tags[0].key", "1-128")),
        ({"tags": [{"key": "k" * 129}]}, ("tags[0].key", "1-128")),
        ({"tags": [{"key": "a/b"}]}, ("tags[0].key", "'/'")),
        ({"tags": [{"key": " team"}]}, ("tags[0].key", "space")),
        ({"tags": [{"key": "team", "values": ["v" * 256]}]}, ("tags[0].values[0]", "0-255")),
        ({"tags": [{"key": "team", "values": ["a#b"]}]}, ("tags[0].values[0]", "'#'")),
        ({"tags": [{"key": 7}]}, ("tags[0].key", "string")),
        ({"tags": [{"key": "team", "values": [1]}]}, ("tags[0].values[0]", "string")),
        ({"tags": [{"key": "team", "values": "vision"}]}, ("tags[0].values", "list")),
        ({"tags": {"team": "vision"}}, ("tags must be a list",)),
        ({"workspace_id": "abc"}, ("workspace_id", "32")),
        ({"workspace_id": ""}, ("workspace_id",)),
        ({"workspace_id": "g" * 31 + "!"}, ("workspace_id",)),
        ({"workspace_id": 0}, ("workspace_id",)),
    ],
)
def test_the_search_s_limits_are_400s(scene, client, body, words):
    refused(client.search(body), *words)


def test_what_the_limits_allow(scene, client):
    assert ids(client.search({"tags": _keys(10)})) == []
    assert ids(client.search({"tags": [{"key": "team", "values": ["v%d" % i for i in range(9)] + ["vision"]}]}))[0] == nightly(4)
    punctuated = {"tags": [{"key": "a b_c.d:e=f+g-h@" + "k" * 112, "values": ["/x y_z.:=+-@", "v" * 255, ""]}]}
    assert ids(client.search(punctuated)) == []
    assert ids(client.search({"workspace_id": WS.upper(), "filters": [NAME]})) == []


def test_a_job_s_tags(scene, client):
    answer = client.request("GET", "/v2/%s/modelarts-training-job/%s/tags" % (emu_project(scene), nightly(7)))
    assert answer.status_code == 200 and answer.json() == {"tags": [{"key": "pipeline", "value": "nightly"}, {"key": "team", "value": "speech"}]}
    assert client.request("GET", "/v2/%s/modelarts-training-job/%s/tags" % (emu_project(scene), nightly(9))).json() == {"tags": []}
    missing = client.request("GET", "/v2/%s/modelarts-training-job/%s/tags" % (emu_project(scene), "b1000000-0000-4000-8000-999999999999"))
    assert missing.status_code == 400 and missing.json()["error_code"] == "ModelArts.2775"
    project = client.request("GET", "/v2/%s/modelarts-training-job/tags" % emu_project(scene)).json()
    assert project == {"tags": [{"key": "pipeline", "values": ["nightly"]}, {"key": "team", "values": ["vision", "speech"]}]}


def emu_project(emu):
    return emu.project_id


def test_a_job_added_while_running_is_the_newest(scene, client):
    tags = {"pipeline": "nightly", "team": "vision"}
    new = scene.add_job(name="nightly-train", tags=tags, timeline=["Running", "Completed"])
    body = {"limit": 1, "filters": [NAME], "tags": [{"key": "pipeline", "values": ["nightly"]}]}
    assert ids(client.search(body)) == [new]
    summary = next(job for job in scene.jobs() if job["id"] == new)
    assert summary["tags"] == tags and summary["workspace_id"] == "0"
    # Added again (the next night): a new id, and the newest again.  (A phase: job without created_ago was created
    # its synthesised history ago; created_ago: 0 makes it created now, already Running.)
    newer = scene.add_job(name="nightly-train", tags=tags, phase="Running", created_ago=0)
    assert newer != new and ids(client.search(body)) == [newer]
    assert client.job(newer).json()["status"]["phase"] == "Running"


def test_scenario_syntax_for_creation_times_templates_and_workspaces(emu, client):
    emu.reset(
        scenario={
            "jobs": [
                {"name": "sweep-{n}", "count": 3, "created_ago": "1d", "stagger": "12h", "phase": "Completed", "tags": {"run": "r{n}", "sweep": "lr"}},
                {"name": "ws-job", "workspace_id": WS, "created_at": "-2h30m", "timeline": ["Running"], "tags": [{"key": "x", "value": "1"}]},
                {"name": "running-now", "created_ago": 90, "phase": "Running"},
            ]
        }
    )
    now = time.time() * 1000
    jobs = {job["name"]: job for job in emu.jobs()}
    assert [jobs["sweep-%d" % n]["tags"] for n in (1, 2, 3)] == [{"run": "r%d" % n, "sweep": "lr"} for n in (1, 2, 3)]
    ages = [(now - jobs["sweep-%d" % n]["create_time"]) / 3600000 for n in (1, 2, 3)]
    assert [round(age) for age in ages] == [24, 36, 48]
    assert round((now - jobs["ws-job"]["create_time"]) / 60000) == 150 and jobs["ws-job"]["workspace_id"] == WS
    assert jobs["ws-job"]["tags"] == {"x": "1"}
    # created_ago fixes the creation time exactly; a Running job created 90 s ago has got to Running already.
    assert round((now - jobs["running-now"]["create_time"]) / 1000) == 90 and jobs["running-now"]["phase"] == "Running"
    assert ids(client.search({"tags": [{"key": "sweep"}]})) == [jobs["sweep-%d" % n]["id"] for n in (1, 2, 3)]


@pytest.mark.parametrize(
    ("job", "words"),
    [
        ({"name": "j", "tags": {"_sys_x": "1"}}, "_sys_"),
        ({"name": "j", "tags": {"a/b": "1"}}, "tag key"),
        ({"name": "j", "tags": {"k": "a#b"}}, "tag 'k'"),
        ({"name": "j", "tags": [{"key": "k", "value": "1"}, {"key": "k", "value": "2"}]}, "twice"),
        ({"name": "j", "tags": "k=v"}, "tags must be"),
        ({"name": "j", "workspace_id": "ws-1"}, "workspace_id"),
        ({"name": "j", "created_ago": "yesterday"}, "created_ago must be seconds or a duration such as 3d"),
        ({"name": "j", "created_ago": "-1d"}, "created_ago must be >= 0"),
        ({"name": "j", "created_ago": "1d", "created_at": -5}, "either created_at or created_ago"),
    ],
)
def test_scenario_mistakes_name_the_job_and_key(emu, job, words):
    with pytest.raises(ControlError) as info:
        emu.add_job(**job)
    assert "400" in str(info.value) and words in str(info.value) and "'j'" in str(info.value)


def test_bulk_scenario_of_a_thousand_reused_names(emu, client):
    emu.reset(scenario="tagged-1000")
    tags = {"tags": [{"key": "team", "values": ["vision"]}], "limit": 50}
    first = client.search(tags).json()
    assert first["total"] == 1000 and first["items"][0]["metadata"]["id"] == "7a9e0000-0000-4000-8000-000000000000"
    assert {item["status"]["phase"] for item in first["items"][1:]} == {"Completed"}
    assert client.search({"filters": [NAME], "limit": 1}).json()["total"] == 1000
    assert client.search({"tags": [{"key": "team", "values": ["speech"]}]}).json()["total"] == 20


def test_reset_loads_a_shipped_scenario_by_name_and_refuses_an_unknown_one(emu):
    assert emu.reset(scenario="nightly")["jobs"] == 9
    with pytest.raises(ControlError) as info:
        emu.reset(scenario="nightly-typo")
    assert "400" in str(info.value) and "scenario file not found: nightly-typo" in str(info.value) and "tagged-10000" in str(info.value)
    assert emu.reset()["jobs"] > 9  # back to the startup scenario
