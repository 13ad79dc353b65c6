# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56: what a faulty service may send the metric gate - a key given twice (a v1 document's
``model_metric_list``, anything in an ft-metrics answer given as text) and ft-metrics points of every shape."""

import json

import pytest

from modelarts_emulator.client import ControlError
from modelarts_emulator.responses import json_bytes_repeating

FT_JOB = "f5600000-0000-4000-8000-000000000001"
QUEUED = "f5600000-0000-4000-8000-000000000002"
POINTS = "f5600000-0000-4000-8000-000000000003"


def ft_path(client, job):
    return "/v2/%s/training-jobs/%s/ft-metrics" % (client.project_id, job)


def pairs(text):
    """The key/value pairs of a JSON object's text, each as sent (a key given twice is kept twice)."""
    return json.loads(text, object_pairs_hook=list)


def test_a_v1_model_metric_list_given_as_a_list_is_the_key_once_per_text(emu, client):
    texts = ['{"total_metric": {"total_metric_values": {"accuracy": 0.61}}}', '{"total_metric": {"total_metric_values": {"accuracy": 0.97}}}']
    emu.add_job(name="legacy-twice", api="v1", job_id=5601, version_id=1, phase="Completed", model_metric_list=texts)
    response = client.v1_job(5601, 1)
    assert response.status_code == 200
    given = [value for key, value in pairs(response.text) if key == "model_metric_list"]
    assert given == texts
    # A JSON reader that keeps the last of a key sees the last text, and every other key of the document is there once.
    assert response.json()["model_metric_list"] == texts[-1] and response.json()["job_id"] == 5601
    with pytest.raises(ControlError, match="or a list of them"):
        emu.add_job(name="legacy-bad", api="v1", job_id=5602, version_id=1, model_metric_list=[])


def test_a_duplicated_key_inside_the_model_metric_list_text_is_served_as_given(emu, client):
    text = '{"total_metric": {"total_metric_values": {"accuracy": 0.97, "accuracy": 0.61}}}'
    emu.add_job(name="legacy-inner", api="v1", job_id=5603, version_id=1, phase="Completed", model_metric_list=text)
    assert client.v1_job(5603, 1).json()["model_metric_list"] == text


def test_an_ft_metrics_answer_given_as_text_is_served_as_given_once_the_job_ran(emu, client):
    answer = '{"data": {"format_version": "1.0", "metrics": [{"name_en": "acc", "data": [0.9]}], "metrics": []}}'
    emu.add_job(id=FT_JOB, name="ft-twice", phase="Completed", ft_metrics={"answer": answer})
    emu.add_job(id=QUEUED, name="ft-queued", phase="Pending", ft_metrics={"answer": answer})
    response = client.request("GET", ft_path(client, FT_JOB))
    assert response.status_code == 200 and response.text == answer
    assert [key for key, _value in pairs(response.text)[0][1]] == ["format_version", "metrics", "metrics"]
    # Before the job ran: the empty answer of any job.
    assert client.request("GET", ft_path(client, QUEUED)).json()["data"]["metrics"] == []


def test_ft_metrics_points_of_every_shape_are_served_as_given(emu, client):
    series = [
        {"name_en": "acc", "x_axis": "step", "data": [{"step": 2, "acc": 0.5}, {"step": 1, "acc": 0.9}]},
        {"name_en": "loss", "data": [[3, 0.2], [1, 0.9], [2, 0.4]]},
    ]
    emu.add_job(id=POINTS, name="ft-points", phase="Completed", ft_metrics=series)
    served = dict((entry["name_en"], entry) for entry in client.request("GET", ft_path(client, POINTS)).json()["data"]["metrics"])
    assert served["acc"]["data"] == series[0]["data"] and served["acc"]["x_axis"] == "step"
    assert served["loss"]["data"] == series[1]["data"]


@pytest.mark.parametrize(
    "ft_metrics, message",
    [
        ({"answer": {"data": {}}}, "ft_metrics.answer is the answer's JSON text, a string"),
        ({"answer": "{}", "metrics": []}, "given without metrics"),
    ],
)
def test_an_answer_text_is_checked_when_the_scenario_loads(ft_metrics, message):
    from modelarts_emulator.scenario import ScenarioError  # pylint: disable=import-outside-toplevel
    from modelarts_emulator.state import EmulatorState  # pylint: disable=import-outside-toplevel

    with pytest.raises(ScenarioError) as raised:
        EmulatorState({"jobs": [{"name": "j", "phase": "Completed", "ft_metrics": ft_metrics}]})
    assert message in str(raised.value)


def test_json_bytes_repeating_gives_the_key_once_per_value_in_place():
    body = json_bytes_repeating({"a": 1, "k": "ignored", "z": [2]}, "k", ["x", {"y": "\u00e9"}])
    assert body.decode("utf-8") == '{"a":1,"k":"x","k":{"y":"\u00e9"},"z":[2]}'
