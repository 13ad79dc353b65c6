# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's check of the option stall (door/stall_checks.check_stall, issue 59): unset, typed values as the lookup
and the event source write them, each wrong value refused naming the option and its key."""

from __future__ import annotations

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import STALL_OPTIONS, StallSettings
from ansible_collections.modelarts.training.plugins.module_utils.door.stall_checks import check_stall


def test_unset_is_no_check_and_an_empty_dict_asks_for_the_services_verdict_with_the_defaults():
    assert check_stall(None) is None
    assert check_stall({}) == StallSettings(None, 1.0, None, True, 10, "all")
    # The module's argument spec gives every suboption, unset ones as None: they take their defaults.
    assert check_stall(dict.fromkeys(STALL_OPTIONS)) == StallSettings(None, 1.0, None, True, 10, "all")


def test_values_as_written_by_the_lookup_or_the_event_source_are_typed():
    settings = check_stall({"idle_minutes": "30", "idle_below": "0.5", "quiet_minutes": 45.0, "service": "no", "grace_minutes": 15, "require": "any"})
    assert settings == StallSettings(30, 0.5, 45, False, 15, "any")
    assert isinstance(settings, tuple) and settings.idle_minutes == 30
    with pytest.raises(AttributeError):
        settings.idle_minutes = 5  # immutable
    assert check_stall({"service": "yes"}).service is True
    assert check_stall({"service": 0, "idle_minutes": 1}).service is False
    assert check_stall({"idle_below": 0, "idle_minutes": 1440}).idle_below == 0.0


@pytest.mark.parametrize(
    "value, message",
    [
        ("30", "stall must be a dict (idle_minutes, idle_below, quiet_minutes, service, grace_minutes, require), got '30'"),
        ([1], "stall must be a dict (idle_minutes, idle_below, quiet_minutes, service, grace_minutes, require), got an array of 1 item"),
        ({"idle_minute": 30}, "stall: unknown key idle_minute (did you mean idle_minutes?)"),
        ({"idle_minutes": 0}, "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 0"),
        ({"idle_minutes": 1441}, "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 1441"),
        ({"idle_minutes": 2.5}, "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 2.5"),
        ({"idle_minutes": True}, "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got true"),
        ({"idle_minutes": "ten"}, "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 'ten'"),
        ({"quiet_minutes": -5}, "stall.quiet_minutes must be a whole number of minutes from 1 to 1440, got -5"),
        ({"grace_minutes": 0}, "stall.grace_minutes must be a whole number of minutes from 1 to 1440, got 0"),
        ({"idle_minutes": 30, "idle_below": 101}, "stall.idle_below must be a number of percent from 0 to 100, got 101"),
        ({"idle_minutes": 30, "idle_below": -0.5}, "stall.idle_below must be a number of percent from 0 to 100, got -0.5"),
        ({"idle_minutes": 30, "idle_below": "nan"}, "stall.idle_below must be a number of percent from 0 to 100, got 'nan'"),
        ({"idle_minutes": 30, "idle_below": "low"}, "stall.idle_below must be a number of percent from 0 to 100, got 'low'"),
        ({"idle_minutes": 30, "idle_below": False}, "stall.idle_below must be a number of percent from 0 to 100, got false"),
        ({"service": "maybe"}, "stall.service must be a boolean (true or false), got 'maybe'"),
        ({"service": 2}, "stall.service must be a boolean (true or false), got 2"),
        ({"require": "most"}, "stall.require must be all or any, got 'most'"),
        ({"require": "ALL"}, "stall.require must be all or any, got 'ALL'"),
        (
            {"service": False},
            "stall asks for no signal: give stall.idle_minutes or stall.quiet_minutes, or leave stall.service true (the service's own hang verdict)",
        ),
    ],
)
def test_each_wrong_value_is_refused_naming_the_option(value, message):
    with pytest.raises(ConnectionConfigError) as caught:
        check_stall(value)
    assert str(caught.value) == message


def test_the_name_in_messages_is_the_callers():
    with pytest.raises(ConnectionConfigError, match=r"^training_job_gate_stall\.quiet_minutes must be a whole number of minutes from 1 to 1440, got 0$"):
        check_stall({"quiet_minutes": 0}, "training_job_gate_stall")
    with pytest.raises(
        ConnectionConfigError, match=r"^training_job_gate_stall: unknown keys grace_minute \(did you mean grace_minutes\?\), requir \(did you mean require\?\)$"
    ):
        check_stall({"grace_minute": 1, "requir": "all"}, "training_job_gate_stall")
