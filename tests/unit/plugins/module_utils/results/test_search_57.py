# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 57, item 3 (searches): a baseline's tag search walks back the service's 31-day windows up to
``baseline.max_age_days``, stops at the first window that gives every candidate its baseline, fails closed on a
failure in any window and is "none matched" only when every window answered with no job; a search by a candidate's
own name is warned about once."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service.connection import Connection

from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks
from ansible_collections.modelarts.training.plugins.module_utils.results import metrics as metrics_mod
from ansible_collections.modelarts.training.plugins.module_utils.job import selection
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_reads import Reading

DAY = 86400000
NOW = 1767225600000  # the service's clock (2026-01-01 00:00:00 UTC)
JOB, OTHER, PROD, OLDER = ("%08x-0000-4000-8000-000000000057" % number for number in range(1, 5))


def v2(job_id, name="nightly", created=NOW, phase="Completed", tags=None):
    details = {"metadata": {"id": job_id, "name": name, "create_time": created}}
    return {"id": job_id, "name": name, "api_version": "v2", "phase": phase, "details": details, "tags": tags or {}}


class Service(object):
    """A search API with the service's rule: a tag search sees the jobs created in its ``create_time`` window, or in the
    last 31 days without one; a search by name alone sees every job.  ``fail_at``: the search (by its number) that fails."""

    def __init__(self, jobs, fail_at=None):
        self.jobs = dict((job["id"], job) for job in jobs)
        self.fail_at = fail_at
        self.searched = []

    def masking_secrets(self):
        return ()

    def search(self, search, deadline=None):
        self.searched.append(search)
        if self.fail_at is not None and len(self.searched) == self.fail_at:
            raise ModelArtsError("search training jobs: HTTP 503", status=503)
        window = search.created_between
        if window is None and search.tags:
            window = (NOW - selection.TAG_WINDOW_MS, NOW)
        assert window is None or window[1] - window[0] <= selection.TAG_WINDOW_MS, window
        keys = []
        for job_id, job in self.jobs.items():
            created = job["details"]["metadata"]["create_time"]
            if window is not None and not window[0] <= created <= window[1]:
                continue
            if search.name is not None and job["name"] != search.name:
                continue
            if any(job["tags"].get(key) not in (values or (job["tags"].get(key),)) or key not in job["tags"] for key, values in search.tags):
                continue
            keys.append(job_id)
        keys.sort(key=lambda key: self.jobs[key]["details"]["metadata"]["create_time"], reverse=True)
        return keys, dict((key, self.jobs[key]) for key in keys)

    def fetch(self, keys, deadline=None):
        return dict((key, self.jobs[key]) for key in keys)


def find(service, given, judged):
    chosen = metric_checks.check_baseline(given)
    keys = [item["id"] for item in judged]
    return metrics_mod.find_baseline(service, chosen, metrics_mod.Candidates(keys, judged), None, judged=judged)


PRODUCTION = {"stage": "production"}


# -- the windows ------------------------------------------------------------------------------------


def test_the_windows_cover_max_age_days_back_in_31_day_steps_without_gap_or_overlap():
    windows = selection.tag_windows(NOW, 400)
    assert len(windows) == 13
    assert windows[0] == (NOW - selection.TAG_WINDOW_MS, NOW)
    assert windows[-1][0] == NOW - 400 * DAY
    for (start, end), (_older_start, older_end) in zip(windows, windows[1:]):
        assert older_end == start - 1
    assert all(0 <= end - start <= selection.TAG_WINDOW_MS for start, end in windows)
    assert selection.tag_windows(NOW, 1) == [(NOW - DAY, NOW)]


def test_a_window_is_a_create_time_filter_kept_through_in_phases():
    search = selection.Search(tags=(("stage", ("production",)),)).in_window(NOW - DAY, NOW).in_phases(("Completed",))
    assert {"key": "create_time", "operator": "between", "value": [str(NOW - DAY), str(NOW)]} in search.filters()
    assert search.describe() == "tagged stage=production in phase Completed created from 2025-12-31 00:00:00 UTC to 2026-01-01 00:00:00 UTC"


# -- the walk -----------------------------------------------------------------------------------------


def test_a_production_job_older_than_31_days_is_found_in_an_older_window_and_the_walk_stops_there():
    candidate = v2(JOB, created=NOW - 3600000)
    prod = v2(PROD, name="prod", created=NOW - 40 * DAY, tags=PRODUCTION)
    older = v2(OLDER, name="prod", created=NOW - 100 * DAY, tags=PRODUCTION)
    service = Service([candidate, prod, older])
    outcomes = find(service, {"tags": PRODUCTION}, [candidate])
    assert outcomes[0].kind == metrics_mod.Outcome.FOUND and outcomes[0].item["id"] == PROD
    # The service's own window, the window ending at the candidate's creation (it overlaps the first), then the one
    # holding day 40: no search further back.
    assert [search.created_between is None for search in service.searched] == [True, False, False]
    assert all(search.tags == (("stage", ("production",)),) for search in service.searched)


def test_each_candidate_walks_until_it_has_its_own_baseline():
    first, second = v2(JOB, created=NOW - 50 * DAY), v2(OTHER, created=NOW - 3600000)
    recent = v2(PROD, name="prod", created=NOW - 10 * DAY, tags=PRODUCTION)
    older = v2(OLDER, name="prod", created=NOW - 70 * DAY, tags=PRODUCTION)
    outcomes = find(Service([first, second, recent, older]), {"tags": PRODUCTION}, [first, second])
    assert [outcome.item["id"] for outcome in outcomes] == [OLDER, PROD]


def test_a_job_older_than_max_age_days_is_not_seen_none_matched_after_every_window():
    candidate = v2(JOB, created=NOW - 3600000)
    service = Service([candidate, v2(PROD, name="prod", created=NOW - 40 * DAY, tags=PRODUCTION)])
    outcomes = find(service, {"tags": PRODUCTION, "max_age_days": 35, "required": False}, [candidate])
    assert outcomes[0].kind == metrics_mod.Outcome.NONE
    assert outcomes[0].why == (
        "no Completed training job tagged stage=production was found; the tag search looked at the jobs created up to 35 days before "
        "2025-12-31 23:00:00 UTC, the newest candidate's creation (baseline.max_age_days; 3 searches: a tag search covers 31 days a request)"
    )
    assert len(service.searched) == 3
    # The default reaches it.
    assert find(Service(service.jobs.values()), {"tags": PRODUCTION}, [candidate])[0].kind == metrics_mod.Outcome.FOUND


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_a_failure_in_any_window_fails_closed_never_none(fail_at):
    candidate = v2(JOB, created=NOW - 3600000)
    service = Service([candidate], fail_at=fail_at)
    outcomes = find(service, {"tags": PRODUCTION, "required": False}, [candidate])
    assert outcomes[0].kind == metrics_mod.Outcome.FAILED
    assert outcomes[0].why.startswith("the search for the newest Completed training job tagged stage=production")
    assert "failed: search training jobs: HTTP 503" in outcomes[0].why
    if fail_at > 1:
        assert " created from " in outcomes[0].why
    assert len(service.searched) == fail_at


def test_a_job_newer_than_the_candidate_still_fails_closed_rather_than_none():
    candidate = v2(JOB, created=NOW - 5 * DAY)
    newer = v2(PROD, name="prod", created=NOW - DAY, tags=PRODUCTION)
    outcomes = find(Service([candidate, newer]), {"tags": PRODUCTION, "required": False}, [candidate])
    assert outcomes[0].kind == metrics_mod.Outcome.FAILED
    assert "were created at or after it" in outcomes[0].why


def test_a_search_by_name_alone_has_no_window():
    candidate = v2(JOB, name="churn", created=NOW - 3600000)
    prod = v2(PROD, name="prod", created=NOW - 200 * DAY)
    service = Service([candidate, prod])
    outcomes = find(service, {"name": "prod"}, [candidate])
    assert outcomes[0].kind == metrics_mod.Outcome.FOUND and outcomes[0].item["id"] == PROD
    assert [search.created_between for search in service.searched] == [None]


# -- the own name -------------------------------------------------------------------------------------


class Client(object):
    service = Connection(request_timeout=30)


class Settings(object):
    max_concurrency = 4


class MeasuredService(Service):
    client = Client()
    settings = Settings()
    selection = None

    @staticmethod
    def clock():
        import time  # pylint: disable=import-outside-toplevel

        return time.monotonic()


def reading(value):
    found = Reading("log")
    found.value = value
    return found


OWN = (
    "baseline.name 'churn-model' is the name of the job this call gates: the baseline is the run before it, refused or not, not the model in "
    "production; keep the production model in a record (baseline: {record: PATH}, the role's training_job_gate_production)"
)


def test_a_search_by_a_candidates_own_name_is_warned_about_once(monkeypatch):
    first, second = v2(JOB, name="churn-model", created=NOW - 2 * 3600000), v2(OTHER, name="churn-model", created=NOW - 3600000)
    service = MeasuredService([first, second, v2(PROD, name="churn-model", created=NOW - DAY)])
    monkeypatch.setattr(metrics_mod, "read_job", lambda *args: {"acc": reading(0.9)})
    plan = metric_checks.plan([{"name": "acc", "regex": "acc=([0-9.]+)", "min_improvement": 0}], {"name": "churn-model"})
    assert plan.measure(service, [first, second]).warnings == [OWN]
    # The plan lives as long as the event source: the next round does not say it again.
    assert plan.measure(service, [dict(second)]).warnings == []


def test_no_warning_for_another_name_or_a_tagged_search():
    candidate = v2(JOB, name="churn-model", created=NOW - 3600000)
    for given in ({"name": "churn-model-production"}, {"name": "churn-model", "tags": PRODUCTION}):
        outcomes = find(Service([candidate]), given, [candidate])
        assert outcomes[0].warning is None, given
    assert find(Service([candidate]), {"name": "churn-model"}, [candidate])[0].warning == OWN
