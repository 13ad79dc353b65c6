# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The completed, terminal and failed Jinja tests."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.modelarts.training.plugins.test import phases
from ansible_collections.modelarts.training.plugins.test.phases import completed, failed, terminal

ALL = ("Creating", "Pending", "Running", "Failed", "Completed", "Terminating", "Terminated", "Abnormal")


@pytest.mark.parametrize("phase", ALL)
def test_each_phase(phase):
    item = {"id": "j", "phase": phase}
    assert completed(phase) is completed(item) is (phase == "Completed")
    assert terminal(phase) is terminal(item) is (phase in ("Completed", "Failed", "Terminated", "Abnormal"))
    assert failed(phase) is failed(item) is (phase in ("Failed", "Abnormal", "Terminated"))


def test_failed_with_own_phases():
    assert failed("Terminated", ["Failed"]) is False
    assert failed("Failed", ["Failed"]) is True
    assert failed({"phase": "Running"}, ["Running"]) is True


def test_unseen_item_is_nothing():
    item = {"id": "j", "phase": None}
    assert (completed(item), terminal(item), failed(item)) == (False, False, False)


@pytest.mark.parametrize(
    "value,fragment",
    [
        ("Complete", "unknown phase 'Complete'"),
        ({"id": "j"}, "no 'phase' key"),
        (3, "got a number"),
        (None, r"got none \(an undefined or null value\)"),
        (["Completed"], r"got a list of 1, not one job; test one item \(jobs\[0\] is modelarts.training.\w+\), or pick the items with select"),
        (
            {"training_job": {"phase": "Completed"}, "training_jobs": []},
            r"got the registered result of modelarts_training_job_info, not a job; test its .training_job",
        ),
    ],
)
def test_bad_input_is_an_error(value, fragment):
    for test in (completed, terminal, failed):
        with pytest.raises(AnsibleFilterError, match=fragment):
            test(value)


def test_bad_fail_phases():
    with pytest.raises(AnsibleFilterError, match="unknown phase 'Failure'"):
        failed("Failed", ["Failure"])
    with pytest.raises(AnsibleFilterError, match="must be a list"):
        failed("Failed", "Failed")


def test_registered_names():
    assert sorted(phases.TestModule().tests()) == ["completed", "failed", "terminal"]
