# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""metrics.py, issue 56: the baseline's typed outcome (found, none, failed), a job never compared with itself or a
newer job, the call's workspace, a relative bound against 0 and numbers printed with digits enough."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks
from ansible_collections.modelarts.training.plugins.module_utils.results import metrics as metrics_mod
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_reads import Reading

DAY = 86400000
NOW = 1767225600000
JOB, OTHER, PROD, TWIN, LATER = ("%08x-0000-4000-8000-000000000000" % number for number in range(1, 6))


def v2(job_id, name="nightly", created=NOW, phase="Completed"):
    details = {"metadata": {"id": job_id, "name": name, "create_time": created}}
    return {"id": job_id, "name": name, "api_version": "v2", "phase": phase, "details": details}


def v1(job_id, version_id, name="nightly", created=NOW):
    details = {"job_id": job_id, "version_id": version_id, "job_name": name, "create_time": created}
    return {"id": job_id, "version_id": version_id, "name": name, "api_version": "v1", "phase": "Completed", "details": details}


class Query(object):
    """``search`` answers ``keys`` (newest first) or raises; ``fetch`` answers from ``jobs``."""

    def __init__(self, keys=(), jobs=None, error=None):
        self.keys, self.jobs, self.error = list(keys), jobs or {}, error
        self.searched, self.fetched = [], []

    def masking_secrets(self):
        return ()

    def search(self, search, deadline=None):
        self.searched.append(search)
        if self.error is not None:
            raise self.error
        return list(self.keys), dict((key, self.jobs[key]) for key in self.keys if key in self.jobs)

    def fetch(self, keys, deadline=None):
        self.fetched.extend(keys)
        return dict((key, self.jobs.get(key) or ModelArtsError("get training job %s: HTTP 503" % key, status=503)) for key in keys)


def baseline(**given):
    return metric_checks.check_baseline(given)


def find(query, chosen, judged, keys=None, workspace_id=None):
    keys = keys if keys is not None else [metrics_mod._key_of(item) for item in judged]  # pylint: disable=protected-access
    return metrics_mod.find_baseline(query, chosen, metrics_mod.Candidates(keys, judged), None, judged=judged, workspace_id=workspace_id)


def test_a_failed_search_is_a_failure_and_only_a_search_with_no_job_is_none():
    candidate = v2(JOB)
    failed = find(Query(error=ModelArtsError("search training jobs: HTTP 503")), baseline(name="nightly", required=False), [candidate])
    assert failed[0].kind == metrics_mod.Outcome.FAILED and "HTTP 503" in failed[0].why and "31 days" not in failed[0].why
    none = find(Query(), baseline(tags={"stage": "production"}, required=False), [candidate])
    assert none[0].kind == metrics_mod.Outcome.NONE and "31 days" in none[0].why
    only_itself = find(Query([JOB], {JOB: candidate}), baseline(name="nightly"), [candidate])
    assert only_itself[0].kind == metrics_mod.Outcome.NONE and "that is not a job this call selects" in only_itself[0].why
    unreadable = find(Query([PROD], {}), baseline(name="nightly"), [candidate])
    assert unreadable[0].kind == metrics_mod.Outcome.FAILED and "could not be read" in unreadable[0].why


def test_a_job_found_not_completed_fails_and_a_job_given_is_never_a_candidate():
    candidate = v2(JOB)
    running = find(Query([PROD], {PROD: v2(PROD, created=NOW - DAY, phase="Running")}), baseline(name="nightly"), [candidate])
    assert running[0].kind == metrics_mod.Outcome.FAILED and "is Running by its own GET, not Completed" in running[0].why
    itself = find(Query(jobs={JOB: candidate}), baseline(training_job_id=JOB, required=False), [candidate])
    assert itself[0].kind == metrics_mod.Outcome.FAILED and "is also a job this call selects" in itself[0].why
    # The v1 version of a v2 candidate, given by key: the same job.
    twin = v1(56, 1)
    other_document = find(Query(jobs={("v1", 56, 1): twin}), baseline(job_id=56, version_id=1), [v2(JOB)])
    assert other_document[0].kind == metrics_mod.Outcome.FAILED and "another document of a job this call selects" in other_document[0].why


def test_each_candidate_gets_the_newest_job_created_before_it_never_another_document_of_a_candidate():
    candidate = v1(56, 1, created=NOW)
    jobs = {TWIN: v2(TWIN, created=NOW), LATER: v2(LATER, created=NOW + DAY), PROD: v2(PROD, created=NOW - DAY)}
    outcomes = find(Query([LATER, TWIN, PROD], jobs), baseline(name="nightly"), [candidate])
    assert outcomes[0].kind == metrics_mod.Outcome.FOUND and outcomes[0].item["id"] == PROD
    first, second = v2(JOB, created=NOW - 2 * DAY), v2(OTHER, created=NOW)
    jobs = {PROD: v2(PROD, created=NOW - DAY), "old": v2("old", created=NOW - 3 * DAY), JOB: first, OTHER: second}
    outcomes = find(Query([OTHER, PROD, JOB, "old"], jobs), baseline(name="nightly"), [first, second])
    assert [outcome.item["id"] for outcome in outcomes] == ["old", PROD]
    only_newer = find(Query([LATER], {LATER: v2(LATER, created=NOW + DAY)}), baseline(name="nightly", required=False), [v2(JOB)])
    assert only_newer[0].kind == metrics_mod.Outcome.FAILED and "was created before" in only_newer[0].why
    unknown = find(Query([PROD], {PROD: v2(PROD, created=NOW - DAY)}), baseline(name="nightly"), [dict(v2(JOB), details={})])
    assert unknown[0].kind == metrics_mod.Outcome.FAILED and "creation time" in unknown[0].why


def test_the_search_looks_in_the_calls_workspace_unless_the_baseline_names_its_own():
    query = Query()
    find(query, baseline(tags={"stage": "production"}), [v2(JOB)], workspace_id="a" * 32)
    own = "b" * 32
    find(query, baseline(tags={"stage": "production"}, workspace_id=own), [v2(JOB)], workspace_id="a" * 32)
    # Each tag search walks back its 31-day windows (issue 57): every window in the same workspace.
    firsts = [search.workspace_id for search in query.searched if search.created_between is None]
    assert firsts == ["a" * 32, own]
    assert set(search.workspace_id for search in query.searched) == {"a" * 32, own}


def metric(**bounds):
    given = dict(name="acc", **bounds)
    return metric_checks.check_metric(given, 0, True)


def reading(value):
    found = Reading("ft_metrics")
    found.value = value
    return found


def test_a_relative_bound_against_zero_fails_closed():
    _entry, broken = metrics_mod.judge(metric(min_relative_improvement=0.1), reading(0.0), reading(0.0), "found")
    assert broken == [
        "acc is 0, but min_relative_improvement 0.1 cannot be computed against the baseline's value of 0 (a fraction of 0 is 0): use min_improvement"
    ]
    entry, broken = metrics_mod.judge(metric(min_improvement=0.0), reading(0.0), reading(0.0), "found")
    assert broken == [] and entry["ok"] is True


@pytest.mark.parametrize(
    "value, text", [(0.9, "0.9"), (0.8999999999, "0.8999999999"), (0.89999999999999, "0.89999999999999"), (20.0, "20"), (0.0, "0"), (1e-07, "1e-07")]
)
def test_numbers_print_the_shortest_text_that_reads_back(value, text):
    assert metrics_mod._number_text(value) == text  # pylint: disable=protected-access
    _entry, broken = metrics_mod.judge(metric(min=0.9), reading(0.89999999999999), None, None)
    assert broken == ["acc is 0.89999999999999, below min 0.9"]
