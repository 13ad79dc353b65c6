# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, items 6, 7 and 18: what the readers of a v1 ``model_metric_list`` and of ft-metrics made of an answer that
can be read two ways - in the user's shape: ``ansible-playbook`` with ``modelarts_training_job_info`` and ``metrics``
against the emulator, in the controller's process and as a module (AnsiballZ).

6. A key given twice (Python's ``json`` keeps the last in silence): the v1 metric, ``total_metric``, the document's own
   ``model_metric_list``; an ft-metrics series' ``data``, the answer's ``data.metrics``.  Each fails closed naming it.
7. An ft-metrics series read two ways: two value lists beside the axis (``value`` won), ``[x, y]`` pairs or parallel
   lists out of order (the list's last point won, not the last step's), an x given twice with two values; points given
   as objects ``{<x_axis>: x, <value>: y}`` (read as "not numbers") are read.
18. An integer beyond any float (10**400) is that metric's problem line; the job's other metrics are read.
"""

import json
import uuid

from test_metrics import WAYS, info, new_id, play, run, save

BIG = 10**400


def v1_text(values):
    return json.dumps({"total_metric": {"total_metric_values": values}})


def v1_job(emulator, name, model_metric_list):
    job_id = 56000 + uuid.uuid4().int % 1000000
    emulator.add_job(name=name, api="v1", job_id=job_id, version_id=1, phase="Completed", model_metric_list=model_metric_list)
    return job_id


def ft_job(emulator, name, ft_metrics):
    job_id = new_id()
    emulator.add_job(id=job_id, name=name, phase="Completed", ft_metrics=ft_metrics)
    return job_id


def ft_answer(*series_texts):
    return '{"train_process": 1.0, "data": {"format_version": "1.0", "metrics": [%s]}}' % ", ".join(series_texts)


def refused(result, metric, words):
    """The task failed, the gate closed for ``metric``, with ``words`` in its problem line and in ``msg``."""
    entry = result["training_job"]["metrics"][metric]
    assert result["failed"] and result["training_job"]["metrics_ok"] is False, result.get("msg")
    assert entry["value"] is None and entry["ok"] is False, entry
    assert any(words in problem for problem in entry["problems"]), (words, entry["problems"])
    assert words in result["msg"], (words, result["msg"])


@WAYS
def test_a_key_given_twice_fails_the_gate_closed_naming_its_path(emulator, run_playbook, tmp_path, in_process):
    # Each answer's last value (what json keeps) would pass min 0.9; the first would not.
    inner = v1_job(emulator, "v1-metric-twice", '{"total_metric": {"total_metric_values": {"accuracy": 0.5, "accuracy": 0.95, "recall": 0.93}}}')
    outer = v1_job(
        emulator, "v1-total-twice", '{"total_metric": {"total_metric_values": {"accuracy": 0.5}}, "total_metric": {"total_metric_values": {"accuracy": 0.95}}}'
    )
    document = v1_job(emulator, "v1-list-twice", [v1_text({"accuracy": 0.5}), v1_text({"accuracy": 0.95})])
    series = ft_job(emulator, "ft-data-twice", {"answer": ft_answer('{"name_en": "m", "data": [0.5], "data": [0.95]}')})
    metrics_list = ft_job(
        emulator,
        "ft-metrics-twice",
        {"answer": ft_answer('{"name_en": "m", "data": [0.5]}').replace("]}}", '], "metrics": [{"name_en": "m", "data": [0.95]}]}}')},
    )
    accuracy = [{"name": "accuracy", "min": 0.9}, {"name": "recall"}]
    tasks = [
        info("inner", "inner", job_id=inner, version_id=1, wait=True, metrics=accuracy),
        info("outer", "outer", job_id=outer, version_id=1, wait=True, metrics=accuracy[:1]),
        info("document", "document", job_id=document, version_id=1, wait=True, metrics=accuracy[:1]),
        info("series", "series", training_job_id=series, wait=True, metrics=[{"name": "m", "min": 0.9}]),
        info("metrics list", "metrics_list", training_job_id=metrics_list, wait=True, metrics=[{"name": "m", "min": 0.9}]),
        save(tmp_path, "inner", "outer", "document", "series", "metrics_list"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    refused(results["inner"], "accuracy", "model_metric_list: total_metric.total_metric_values.accuracy is given 2 times")
    # A key of the same object that is given once is read.
    assert results["inner"]["training_job"]["metrics"]["recall"]["value"] == 0.93
    refused(results["outer"], "accuracy", "model_metric_list: total_metric is given 2 times")
    refused(results["document"], "accuracy", "model_metric_list: the job's document gives model_metric_list 2 times")
    refused(results["series"], "m", "ft-metrics: series m gives data more than once")
    refused(results["metrics_list"], "m", "ft-metrics: the answer gives data.metrics 2 times")


@WAYS
def test_an_ft_series_is_read_in_step_order_by_its_axis_and_fails_closed_when_ambiguous(emulator, run_playbook, tmp_path, in_process):
    two_lists = ft_job(emulator, "ft-two-lists", [{"name_en": "m", "data": {"step": [1, 2], "value": [0.95, 0.96], "accuracy": [0.5, 0.4]}}])
    pairs = ft_job(emulator, "ft-pairs-unordered", [{"name_en": "m", "x_axis": "step", "data": [[3, 0.5], [1, 0.9], [2, 0.95]]}])
    lists = ft_job(emulator, "ft-lists-unordered", [{"name_en": "m", "x_axis": "epoch", "data": {"epoch": [2, 1], "value": [0.5, 0.95]}}])
    twice = ft_job(emulator, "ft-step-twice", [{"name_en": "m", "data": [[1, 0.9], [2, 0.95], [2, 0.5]]}])
    objects = ft_job(
        emulator,
        "ft-object-points",
        [
            {"name_en": "acc", "x_axis": "step", "data": [{"step": 20, "acc": 0.81}, {"step": 10, "acc": 0.74}, {"step": 30, "acc": 0.88}]},
            {"name_en": "loss", "x_axis": "epoch", "data": [{"epoch": 2, "value": 0.4}, {"epoch": 1, "value": 0.9}]},
        ],
    )
    bounded = [{"name": "m", "min": 0.9}]
    tasks = [
        info("two value lists", "two_lists", training_job_id=two_lists, wait=True, metrics=bounded),
        info("pairs out of order", "pairs", training_job_id=pairs, wait=True, metrics=bounded),
        info("lists out of order", "lists", training_job_id=lists, wait=True, metrics=bounded),
        info("a step twice", "twice", training_job_id=twice, wait=True, metrics=bounded),
        info(
            "object points",
            "objects",
            training_job_id=objects,
            wait=True,
            metrics=[{"name": "acc", "min": 0.85}, {"name": "loss", "goal": "min", "max": 0.5}, {"name": "best", "pick": "max"}],
        ),
        save(tmp_path, "two_lists", "pairs", "lists", "twice", "objects"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    refused(results["two_lists"], "m", "series m: data is an object (step, value, accuracy) without exactly one list of values beside its x axis")
    # The last step's value, not the list's last point: 0.5 is below min.
    for name in ("pairs", "lists"):
        entry = results[name]["training_job"]["metrics"]["m"]
        assert results[name]["failed"] and (entry["value"], entry["ok"]) == (0.5, False), (name, entry)
    refused(results["twice"], "m", "series m: data[1][0] and data[2][0] give one x (integer 2) two values (number 0.95, number 0.5)")
    read = results["objects"]
    assert not read["failed"] and read["training_job"]["metrics_ok"] is True, read.get("msg")
    values = read["training_job"]["metrics"]
    assert (values["acc"]["value"], values["loss"]["value"], values["acc"]["problems"]) == (0.88, 0.4, [])
    # An undeclared metric: "best" is no series; its problem is its own.
    assert values["best"]["value"] is None and values["best"]["problems"] == ["ft-metrics: no series best (the job has acc, loss)"]


@WAYS
def test_an_integer_beyond_any_float_is_its_metrics_own_problem(emulator, run_playbook, tmp_path, in_process):
    legacy = v1_job(emulator, "v1-huge", v1_text({"accuracy": BIG, "recall": 0.93}))
    tuned = ft_job(emulator, "ft-huge", [{"name_en": "m", "data": [0.5, BIG]}, {"name_en": "n", "data": [[1, 0.7], [BIG, 0.8]]}])
    tasks = [
        info("v1", "legacy", job_id=legacy, version_id=1, wait=True, metrics=[{"name": "accuracy", "min": 0.9}, {"name": "recall", "min": 0.9}]),
        info("ft", "tuned", training_job_id=tuned, wait=True, metrics=[{"name": "m", "min": 0.1}, {"name": "n", "min": 0.75}]),
        save(tmp_path, "legacy", "tuned"),
    ]
    results, output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    assert "too large to convert" not in output
    refused(
        results["legacy"], "accuracy", "model_metric_list: total_metric.total_metric_values.accuracy is beyond the range of a float (an integer of 1329 bits)"
    )
    recall = results["legacy"]["training_job"]["metrics"]["recall"]
    assert (recall["value"], recall["source"], recall["ok"], recall["problems"]) == (0.93, "v1", True, [])
    refused(results["tuned"], "m", "ft-metrics: series m: point 1 of 2 is beyond the range of a float (an integer of 1329 bits)")
    # An x that large is still an x: the newest step's value is read.
    newest = results["tuned"]["training_job"]["metrics"]["n"]
    assert (newest["value"], newest["source"], newest["ok"], newest["problems"]) == (0.8, "ft_metrics", True, [])
