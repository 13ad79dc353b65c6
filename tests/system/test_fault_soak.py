# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quick form of the fault soak (tests/system/soak.py; benchmarks/fault_soak.py runs the full form): every answer right or a clean error.

A dedicated HTTPS emulator injects transient faults (429 with Retry-After, 500/502/503/504, TCP resets,
responses slower than the timeout, HTML pages, truncated bodies) into at least 30% of the requests
while 8 threads query jobs through the staged collection's client and query pipeline. No timing is
asserted: only correctness, the share of faults and the absence of tracebacks.
"""

import pytest

import soak as fault_soak  # pylint: disable=import-error
from modelarts_emulator.launcher import running_emulator  # pylint: disable=import-error

QUERIES = 240


@pytest.fixture(scope="module")
def soak(collection_root):
    """The summary of one quick soak against its own emulator."""
    modules = fault_soak.import_collection(collection_root)
    with running_emulator(scenario="empty", tls=True) as emu:
        summary = fault_soak.run_soak(emu, modules, queries=QUERIES, workers=8, fault_rate=0.45, seed=424242)
    print(fault_soak.table(summary))
    return summary


def test_every_answer_is_correct_or_a_clean_error(soak):
    """Zero wrong answers, zero errors that a retry should have avoided, zero tracebacks."""
    assert soak["queries"] == QUERIES
    assert soak["outcomes"]["wrong"] == 0, soak["problems"]
    assert soak["outcomes"]["unexpected_error"] == 0, soak["problems"]
    assert soak["outcomes"]["traceback"] == 0, soak["problems"]
    assert soak["outcomes"]["correct"] + soak["outcomes"]["clean_error"] == QUERIES


def test_at_least_thirty_percent_of_requests_were_faulted(soak):
    """The emulator's own log shows the faults, of every transient kind."""
    assert soak["fault_ratio_requests"] >= 0.30, soak["faults_by_type"]
    kinds = set(name.split("-")[0] for name in soak["faults_by_type"])
    assert {"throttle", "error", "reset", "delay", "html", "truncate"} <= kinds, soak["faults_by_type"]
    assert {"error-500", "error-502", "error-503", "error-504", "throttle-429"} <= set(soak["faults_by_type"])
    planned = set(record["fault"] for record in soak["records"])
    assert {"throttle-ra%d" % fault_soak.LONG_RETRY_AFTER, "nulls"} <= planned, planned


def test_long_retry_after_ends_at_the_deadline_and_nulls_are_read(soak):
    """A Retry-After beyond the request budget ends the query at once; null-filled documents give correct items."""
    long_ones = [record for record in soak["records"] if record["fault"] == "throttle-ra%d" % fault_soak.LONG_RETRY_AFTER]
    assert long_ones and all(record["outcome"] == "clean_error" for record in long_ones), long_ones[:3]
    nulls = [record for record in soak["records"] if record["fault"] == "nulls"]
    assert nulls and all(record["outcome"] == "correct" for record in nulls), nulls[:3]


def test_retries_recovered_and_exhausted_retries_fail_cleanly(soak):
    """Retries were used; queries whose faults outlasted them ended as clean, single-line errors."""
    assert soak["retries"] > 0
    assert soak["outcomes"]["clean_error"] > 0
    for record in soak["records"]:
        if record["outcome"] == "clean_error" and record["fault"] == "throttle-ra%d" % fault_soak.LONG_RETRY_AFTER:
            assert record["attempts"] == 1 and "no time left before the deadline" in record["detail"], record
        elif record["outcome"] == "clean_error":
            assert record["attempts"] == 5
            assert "gave up after 5 attempts" in record["detail"] or "Timeout" in record["detail"], record
            assert "\n" not in record["detail"] and "Traceback" not in record["detail"]
