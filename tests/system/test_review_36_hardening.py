# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36, item 6: hardening, through ansible-playbook and ansible-rulebook against the emulator.

* A proxy URL whose host cannot be read (``http://u:<password>@[fd00::1``: the IPv6 bracket is never closed) was a
  ``ValueError`` from inside the standard library: a traceback for the module, the lookup and the event source.  It is
  now a clean error naming the ``proxy`` option, or the variable the runner's proxy came from (``HTTPS_PROXY``), and
  never the password.
* A tag search that finds nothing says it covers the jobs created in the last 31 days only (the service's window): a
  job tagged six weeks ago is not missing, it is out of the window.
* ``latest`` among jobs created in the same millisecond keeps the greatest id, whatever order the service lists them
  in (the emulator's ``search_ties`` setting), in the module and the role, and the event source lists them in the same
  order (a rulebook that deploys once per name deploys that job).
"""

import json

import pytest
import yaml

from conftest import emulator_connection
from eda_helpers import run_rulebook, unique_id

MODULE = "modelarts.training.modelarts_training_job_info"
ROLE = "modelarts.training.training_job_gate"
SOURCE = "modelarts.training.training_job_phase"
COMPLETED = "a1000000-0000-4000-8000-000000000001"
PASSWORD = "Prx7SecretPw9Kq"
BROKEN_PROXY = "http://proxyuser:%s@[fd00::1" % PASSWORD
SHAPE = "it is not a URL of the form scheme://host:port (with user:password@ before the host for a proxy that wants them)"


def rulebook(tmp_path, arguments, rules, until=None):
    """A rulebook file in ``tmp_path``: the source with ``arguments`` and the given ``rules``; with ``until`` (a job id),
    a second source watches that job and ends when it is finished, which stops ansible-rulebook (a search never ends)."""
    path = tmp_path / "rulebook.yml"
    sources = [{"name": "jobs", SOURCE: arguments}]
    if until is not None:
        sources.append({"name": "until", SOURCE: {"training_job_ids": [until], "interval": 0.3, "stop_when_done": True}})
    book = [{"name": "Watch", "hosts": "all", "match_multiple_rules": True, "sources": sources, "rules": rules}]
    path.write_text(yaml.safe_dump(book, sort_keys=False))
    return str(path)


def ending_job(emu):
    """A job that completes after a few polls: the ``until`` of :func:`rulebook`."""
    job = unique_id("r36-until")
    emu.add_jobs([{"id": job, "name": "r36-until", "timeline": [{"phase": "Running", "polls": 8}, "Completed"]}])
    return job


PRINT_EVENTS = [
    {
        "name": "Print every event",
        "condition": "event.modelarts is defined",
        "action": {"debug": {"msg": "EVENT|{{ event.modelarts.training_job.id }}|{{ event.modelarts.phase }}"}},
    }
]


def assert_clean(output):
    assert "Traceback" not in output, output[-4000:]
    assert PASSWORD not in output and "proxyuser:" not in output, output[-4000:]


# -- an invalid proxy URL ---------------------------------------------------------------------------


def test_an_invalid_proxy_url_is_a_clean_error_naming_the_option_or_variable_in_the_module_and_the_lookup(emulator, run_playbook):
    def tasks(option):
        keyword = ", proxy='%s'" % option if option else ""
        lookup = "lookup('modelarts.training.training_job', '%s', backoff_retries=0%s)" % (COMPLETED, keyword)
        module = dict(training_job_id=COMPLETED, backoff_retries=0, **({"proxy": option} if option else {}))
        return [
            {"name": "module", MODULE: module, "register": "module", "ignore_errors": True},
            {"name": "lookup", "ansible.builtin.set_fact": {"job": "{{ %s }}" % lookup}, "ignore_errors": True},
        ]

    # The option (and the keyword), then the runner's HTTPS_PROXY: the module and the lookup each fail with one message.
    for option, env, expected in (
        (BROKEN_PROXY, {}, "proxy: " + SHAPE),
        (None, {"HTTPS_PROXY": BROKEN_PROXY, "NO_PROXY": "", "no_proxy": ""}, "(https_proxy or HTTPS_PROXY): " + SHAPE),
    ):
        play = [{"hosts": "localhost", "gather_facts": False, "tasks": tasks(option)}]
        result = run_playbook(play, env=dict(emulator.env("aksk"), **env), verbosity=3)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-4000:]
        assert_clean(output)
        assert output.count(expected) >= 2, output[-4000:]
        failed_lookups = [line for line in output.splitlines() if "The lookup plugin 'modelarts.training.training_job' failed" in line]
        assert failed_lookups and all(expected in line for line in failed_lookups), output[-4000:]


def test_an_invalid_proxy_url_is_a_clean_error_naming_the_argument_or_variable_in_the_event_source(emulator, ansible_env, tmp_path):
    as_argument = rulebook(tmp_path, {"training_job_ids": [COMPLETED], "proxy": BROKEN_PROXY, "interval": 0.2}, PRINT_EVENTS)
    result = run_rulebook(dict(ansible_env, **emulator.env("aksk")), tmp_path, as_argument, timeout=90)
    output = result.stdout + result.stderr
    assert_clean(output)
    assert "proxy: " + SHAPE in output, output[-4000:]
    as_variable = rulebook(tmp_path, {"training_job_ids": [COMPLETED], "backoff_retries": 0, "interval": 0.2}, PRINT_EVENTS)
    env = dict(ansible_env, **emulator.env("aksk"))
    env.update(HTTPS_PROXY=BROKEN_PROXY, NO_PROXY="", no_proxy="")
    result = run_rulebook(env, tmp_path, as_variable, timeout=90)
    output = result.stdout + result.stderr
    assert_clean(output)
    assert "(https_proxy or HTTPS_PROXY): " + SHAPE in output, output[-4000:]
    assert "EVENT|" not in result.stdout


# -- a tag search that finds nothing ---------------------------------------------------------------

WINDOW = "a tag search covers the jobs created in the last 31 days only"


def test_a_tag_search_that_finds_nothing_says_it_covers_the_last_31_days(emulator, run_playbook, ansible_env, tmp_path):
    tag = unique_id("r36-old")
    # Tagged, but created six weeks ago: outside the service's window.
    emulator.add_jobs([{"id": unique_id("r36-old-run"), "name": "r36-old-run", "phase": "Completed", "created_ago": 42 * 86400, "tags": {"r36-cohort": tag}}])
    connection = emulator_connection(emulator)
    tasks = [
        {"name": "without wait", MODULE: dict(connection, tags={"r36-cohort": tag}), "register": "found"},
        {"name": "with wait", MODULE: dict(connection, tags={"r36-cohort": tag}, wait=True, wait_timeout=0), "register": "waited", "ignore_errors": True},
        {
            "block": [
                {
                    "ansible.builtin.include_role": {"name": ROLE},
                    "vars": {"training_job_gate_tags": {"r36-cohort": tag}, "training_job_gate_timeout": 0, "training_job_gate_connection": connection},
                }
            ],
            "rescue": [{"ansible.builtin.debug": {"msg": "GATE CLOSED {{ ansible_failed_result.msg }}"}}],
        },
        {"ansible.builtin.copy": {"content": "{{ [found, waited] | to_json }}", "dest": str(tmp_path / "results.json")}},
    ]
    result = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}])
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    found, waited = json.loads((tmp_path / "results.json").read_text())
    assert found["training_jobs"] == [] and not found.get("failed")
    assert found["warnings"] == ["no training job tagged r36-cohort=%s was found: %s (the service's window)" % (tag, WINDOW)], found
    assert waited["failed"] and waited["msg"].endswith("; %s (the service's window)" % WINDOW), waited["msg"]
    assert "GATE CLOSED" in output and output.count(WINDOW) >= 3, output[-4000:]

    # The event source says it once, as a warning, and goes on searching (until the other source ends).
    other = ending_job(emulator)
    book = rulebook(tmp_path, {"tags": {"r36-cohort": tag}, "interval": 0.2}, PRINT_EVENTS, until=other)
    process = run_rulebook(dict(ansible_env, **emulator.env("aksk")), tmp_path, book, timeout=120)
    output = process.stdout + process.stderr
    said = [line for line in output.splitlines() if WINDOW in line]
    assert len(said) == 1 and "WARNING" in said[0] and "no training job tagged r36-cohort=%s was found yet" % tag in said[0], output[-4000:]
    assert "EVENT|%s|Completed" % other in process.stdout, output[-4000:]


# -- latest among jobs created in the same millisecond ----------------------------------------------


def tied_jobs(emu, count=60):
    """``count`` Completed jobs of one new name created in the same millisecond (one add_jobs call), added in an order that
    is not their ids': the greatest id is added last, so it is on the last page of a search that lists them as added."""
    name = unique_id("r36-tie")
    ids = ["%s-%03d" % (name, (index * 37) % count) for index in range(count)]
    ids.remove(max(ids))
    ids.append("%s-%03d" % (name, count - 1))
    emu.add_jobs([{"id": job, "name": name, "phase": "Completed"} for job in ids])
    return name, ids


@pytest.mark.parametrize("ties", ["id", "added"])
def test_latest_among_jobs_created_together_keeps_the_greatest_id_in_the_module_and_the_role(modelarts_emulator, run_playbook, tmp_path, ties):
    emu = modelarts_emulator
    emu.settings(search_ties=ties)
    name, ids = tied_jobs(emu)
    connection = emulator_connection(emu)
    tasks = [
        {"name": "every run", MODULE: dict(connection, name=name), "register": "every"},
        {"name": "module", MODULE: dict(connection, name=name, latest=True), "register": "newest"},
        {
            "name": "role",
            "ansible.builtin.include_role": {"name": ROLE},
            "vars": {"training_job_gate_name": name, "training_job_gate_latest": True, "training_job_gate_connection": connection},
        },
        {"ansible.builtin.copy": {"content": "{{ [every, newest, modelarts_training_jobs] | to_json }}", "dest": str(tmp_path / "results.json")}},
    ]
    result = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}])
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    every, newest, gated = json.loads((tmp_path / "results.json").read_text())
    # The jobs were created in the same millisecond; the results list them greatest id first.
    assert len(set(job["create_time"] for job in every["training_jobs"])) == 1
    assert [job["id"] for job in every["training_jobs"]] == sorted(ids, reverse=True)
    assert newest["training_job"]["id"] == max(ids) and [job["id"] for job in gated] == [max(ids)]


def test_the_event_source_lists_jobs_created_together_greatest_id_first(modelarts_emulator, ansible_env, tmp_path):
    emu = modelarts_emulator
    emu.settings(search_ties="added")
    name, ids = tied_jobs(emu, count=12)
    # Deploy once per name: the first event of the name wins (ansible-rulebook's throttle).
    rules = [
        {
            "name": "Deploy the newest run of the name",
            "condition": 'event.modelarts.phase == "Completed" and event.modelarts.training_job.name == "%s"' % name,
            "throttle": {"once_within": "5 minutes", "group_by_attributes": ["event.modelarts.training_job.name"]},
            "action": {"debug": {"msg": "DEPLOY|{{ event.modelarts.training_job.id }}"}},
        },
    ]
    book = rulebook(tmp_path, {"name": name, "interval": 0.2}, rules, until=ending_job(emu))
    result = run_rulebook(dict(ansible_env, **emu.env("aksk")), tmp_path, book, timeout=120)
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output[-4000:]
    deployed = [line.split("DEPLOY|", 1)[1].split('"')[0] for line in result.stdout.splitlines() if "DEPLOY|" in line]
    assert deployed == [max(ids)], output[-4000:]
