# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, items 6, 7, 18: the v1 and ft-metrics readers refuse what can be read two ways (a key given twice, an
ambiguous series), read points in step order by the axis ``x_axis`` names, and give an integer beyond any float its own
problem line."""

from __future__ import annotations

import json

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.results import metric_reads
from ansible_collections.modelarts.training.plugins.module_utils.job.jobs import normalise_v1
from ansible_collections.modelarts.training.plugins.module_utils.door.metric_checks import plan
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import KeyedTwice, pairs_marking_duplicates

BIG = 10**400


def decoded(text):
    """``text`` decoded as the transport decodes a v1 document or an ft-metrics answer (``expect="json_keyed"``)."""
    return json.loads(text, object_pairs_hook=pairs_marking_duplicates)


def test_only_an_object_with_a_key_given_twice_is_marked_and_it_keeps_every_value():
    plain = decoded('{"a": {"b": 1}, "c": [{"d": 2}]}')
    assert plain.__class__ is dict and plain["a"].__class__ is dict and plain["c"][0].__class__ is dict
    marked = decoded('{"a": 1, "b": 2, "a": 3, "a": 4}')
    assert isinstance(marked, KeyedTwice) and marked == {"a": 4, "b": 2} and marked.duplicated == {"a": [1, 3, 4]}
    assert metric_reads.twice(marked, "a") == [1, 3, 4] and metric_reads.twice(marked, "b") is None and metric_reads.twice(plain, "a") is None


def v1_reading(document_text, name="accuracy"):
    item = normalise_v1(decoded(document_text))
    return metric_reads.read_v1(item, plan([{"name": name}]).metrics[0])


def document(model_metric_list):
    return '{"job_id": 1, "version_id": 1, "status": 10, "model_metric_list": %s}' % json.dumps(model_metric_list)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            document('{"total_metric": {"total_metric_values": {"accuracy": 0.5, "accuracy": 0.95}}}'),
            "model_metric_list: total_metric.total_metric_values.accuracy is given 2 times",
        ),
        (
            document('{"total_metric": {"total_metric_values": {"accuracy": 0.5}, "total_metric_values": {"accuracy": 0.95}}}'),
            "model_metric_list: total_metric.total_metric_values is given 2 times",
        ),
        (
            document('{"total_metric": {"total_metric_values": {"accuracy": 0.5}}, "total_metric": {"total_metric_values": {"accuracy": 0.9}}}'),
            "model_metric_list: total_metric is given 2 times",
        ),
        (
            document('{"total_metric": {"total_metric_values": {"accuracy": 0.5}}}')[:-1] + ', "model_metric_list": "{}"}',
            "model_metric_list: the job's document gives model_metric_list 2 times",
        ),
        (
            document('{"total_metric": {"total_metric_values": {"accuracy": %d, "recall": 0.9}}}' % BIG),
            "model_metric_list: total_metric.total_metric_values.accuracy is beyond the range of a float (an integer of 1329 bits)",
        ),
    ],
)
def test_a_v1_key_given_twice_or_a_huge_integer_is_no_value(text, expected):
    reading = v1_reading(text)
    assert (reading.value, reading.problems) == (None, [expected])


def test_a_v1_key_given_twice_elsewhere_leaves_the_metric_read():
    text = document('{"total_metric": {"total_metric_values": {"accuracy": 0.93, "recall": 0.1, "recall": 0.2}}, "x": 1, "x": 2}')
    assert (v1_reading(text).value, v1_reading(text).problems) == (0.93, [])
    # The other metrics of a job with a huge integer are read.
    assert v1_reading(document('{"total_metric": {"total_metric_values": {"accuracy": %d, "recall": 0.9}}}' % BIG), "recall").value == 0.9


def test_number_gives_an_integer_beyond_any_float_its_own_line():
    assert metric_reads.number(BIG) == (None, "beyond the range of a float (an integer of 1329 bits)")
    assert metric_reads.number(-BIG)[1] == "beyond the range of a float (an integer of 1329 bits)"
    assert metric_reads.number(2**1023) == (float(2**1023), None)


def values(series):
    return [value for _index, value in metric_reads.series_values(series)]


@pytest.mark.parametrize(
    "series, expected",
    [
        ({"data": [[3, 0.5], [1, 0.9], [2, 0.95]]}, [0.9, 0.95, 0.5]),
        ({"x_axis": "epoch", "data": {"epoch": [2, 1], "value": [0.5, 0.95]}}, [0.95, 0.5]),
        ({"data": {"step": [2, 1], "acc": [0.5, 0.95]}}, [0.95, 0.5]),
        ({"x_axis": "step", "data": [{"step": 20, "acc": 0.8}, {"step": 10, "acc": 0.7}]}, [0.7, 0.8]),
        ({"data": [{"epoch": 2, "value": 0.4}, {"epoch": 1, "value": 0.9}]}, [0.9, 0.4]),
        ({"data": [{"step": 2, "timestamp": 100, "value": 0.4}, {"step": 1, "timestamp": 50, "value": 0.9}], "x_axis": "step"}, [0.9, 0.4]),
        ({"data": [[1, 0.5], [1, 0.5], [2, 0.6]]}, [0.5, 0.5, 0.6]),
        ({"data": [[BIG, 0.8], [1, 0.7]]}, [0.7, 0.8]),
        ({"x_axis": "step", "data": [0.3, 0.2]}, [0.3, 0.2]),
    ],
)
def test_points_are_read_in_the_order_of_their_x(series, expected):
    assert values(series) == expected


@pytest.mark.parametrize(
    "series, expected",
    [
        ({"data": {"step": [1, 2], "value": [0.9, 0.9], "acc": [0.1, 0.2]}}, "data is an object (step, value, acc) without exactly one list of values"),
        ({"data": {"step": [1], "epoch": [1], "value": [0.9]}}, "data (step, epoch, value) has 2 x axes (step, epoch) and no x_axis says which"),
        ({"x_axis": "iter", "data": {"step": [1], "value": [0.9]}}, "data (step, value) has no list iter, the x axis x_axis names"),
        ({"data": [[1, 0.9], [1, 0.5]]}, "data[0][0] and data[1][0] give one x (integer 1) two values (number 0.9, number 0.5)"),
        ({"data": [[1, 0.9], 0.5]}, "data mixes shapes: array/number"),
        ({"data": [[1, 0.9], {"step": 2, "value": 0.5}]}, "data mixes shapes: array/object"),
        ({"data": [{"step": 1, "value": 0.9}, {"step": 2, "acc": 0.5}]}, "data mixes shapes: data[0] gives value by step, data[1] (step, acc)"),
        ({"data": [{"step": 1, "value": 0.9, "acc": 0.5}]}, "data[0] (step, value, acc) has not exactly one value beside its x axis step"),
        ({"data": [{"value": 0.9}]}, "data[0] (value) has no x axis"),
        ({"data": [["a", 0.9]]}, "data[0][0], the x of a point, is string 'a', not a finite number"),
        ({"x_axis": 3, "data": [0.9]}, "x_axis is integer 3, not the name of a field"),
        ({"data": decoded('{"step": [1], "value": [0.9], "value": [0.1]}')}, "data gives value more than once"),
        ({"data": [decoded('{"step": 1, "value": 0.9, "value": 0.1}')]}, "data[0] gives value more than once"),
    ],
)
def test_a_series_read_two_ways_names_why(series, expected):
    with pytest.raises(metric_reads.OddSeries) as raised:
        metric_reads.series_values(series)
    assert expected in str(raised.value)


class Answer(object):
    """An ft-metrics answer as the client returns it (``data``)."""

    def __init__(self, text):
        self.data = decoded(text)


class FtClient(object):
    def __init__(self, text):
        self.text = text

    def get_ft_metrics(self, job_id, deadline=None, max_bytes=None):
        return Answer(self.text)


def ft_read(text, metrics):
    readings = metric_reads.read_ft(FtClient(text), {"id": "j"}, plan(metrics).metrics, (), None)
    return dict((name, (reading.value, reading.problems)) for name, reading in readings.items())


def test_ft_metrics_keys_given_twice_fail_closed_naming_them():
    assert ft_read('{"data": {"metrics": [{"name_en": "m", "data": [1]}]}, "data": {"metrics": []}}', [{"name": "m"}]) == {
        "m": (None, ["ft-metrics: the answer gives data 2 times"])
    }
    assert ft_read('{"data": {"metrics": [{"name_en": "m", "data": [1]}], "metrics": []}}', [{"name": "m"}])["m"][1] == [
        "ft-metrics: the answer gives data.metrics 2 times"
    ]
    series = ['{"name_en": "m", "data": [0.1], "data": [0.9]}', '{"name_en": "a", "name_en": "b", "data": [0.5]}', '{"name_en": "n", "data": [0.7]}']
    text = '{"data": {"metrics": [%s]}}' % ", ".join(series)
    found = ft_read(text, [{"name": "m"}, {"name": "a"}, {"name": "b"}, {"name": "n"}])
    assert found == {
        "m": (None, ["ft-metrics: series m gives data more than once"]),
        "a": (None, ["ft-metrics: series a gives name_en more than once"]),
        "b": (None, ["ft-metrics: series b gives name_en more than once"]),
        "n": (0.7, []),
    }


def test_a_huge_point_is_its_series_problem_and_the_others_are_read():
    text = '{"data": {"metrics": [{"name_en": "m", "data": [0.5, %d]}, {"name_en": "n", "data": [0.7]}]}}' % BIG
    assert ft_read(text, [{"name": "m"}, {"name": "n"}]) == {
        "m": (None, ["ft-metrics: series m: point 1 of 2 is beyond the range of a float (an integer of 1329 bits)"]),
        "n": (0.7, []),
    }


def test_a_bad_point_is_named_by_its_place_in_data_whatever_the_order():
    text = '{"data": {"metrics": [{"name_en": "m", "data": [[2, 0.5], [1, null]]}]}}'
    assert ft_read(text, [{"name": "m", "pick": "max"}])["m"][1] == ["ft-metrics: series m: point 1 of 2 is not a number (null)"]
