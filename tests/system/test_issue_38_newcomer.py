# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a third newcomer met (issue 38), met through ``ansible-playbook`` against the emulator: a gate on a name no
job has, a reused name without ``latest``, errors that say where a value came from, a typo in the role's
connection, the Jinja tests given a list, the shipped gate playbook's release name, and a quiet role.

Each test fails on the code before the issue; docs/troubleshooting.md quotes the messages they see.
"""

import json
import os
import re
import uuid

import pytest

from conftest import BIN, ROOT, emulator_connection
from documented import assert_documented
from peers import closed_port

ROLE = "modelarts.training.training_job_gate"
GATE_PLAYBOOK = os.path.join(ROOT, "playbooks", "gate_deployment.yml")


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def gate_play(emu, connection=None, **variables):
    """One play: the role with ``variables``, its connection in the group's module_defaults (or in ``connection``)."""
    play = {"hosts": "localhost", "gather_facts": False, "roles": [{"role": ROLE, "vars": dict({"training_job_gate_poll": 0.2}, **variables)}]}
    if connection is None:
        play["module_defaults"] = {"group/modelarts.training.modelarts": emulator_connection(emu)}
    else:
        play["roles"][0]["vars"]["training_job_gate_connection"] = connection
    return [play]


def output(result):
    return result.stdout + result.stderr


def task_headers(text):
    return re.findall(r"^TASK \[(.*?)\]", text, re.M)


@pytest.fixture
def reused(emulator):
    """A name reused by two runs: yesterday's Failed, today's Completed."""
    name = unique("i38-nightly")
    old, new = str(uuid.uuid4()), str(uuid.uuid4())
    emulator.add_jobs(
        [
            {"id": old, "name": name, "phase": "Failed", "created_ago": "1d", "failure": {"exit_code": 137, "message": "OOMKilled"}},
            {"id": new, "name": name, "phase": "Completed", "created_ago": 60},
        ]
    )
    return name, old, new


@pytest.fixture
def completed_job(emulator):
    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique("i38-done"), "phase": "Completed"}])
    return job


# -- item 1: a gate on a name no job has -------------------------------------------------------------------------


@pytest.mark.parametrize("selector", ["name", "tags"])
def test_a_gate_on_a_search_no_job_matches_says_no_job_was_found(emulator, run_playbook, selector):
    value = unique("i38-nothing")
    variables = {"training_job_gate_name": value} if selector == "name" else {"training_job_gate_tags": {"i38": value}}
    # Several searches end within the wait; the one under way when it runs out is cut short, and is not a failure (41).
    result = run_playbook(gate_play(emulator, training_job_gate_timeout=4, **variables))
    text = output(result)
    assert result.returncode != 0
    described = "named '%s'" % value if selector == "name" else "tagged i38=%s created in the last 31 days" % value
    expected = "training_job_gate: closed: no training job %s was found after waiting " % described
    assert expected in text, text[-3000:]
    assert "1 of 1" not in text and "search failed" not in text and "deadline passed" not in text, text[-3000:]
    assert_documented(re.search(r"training_job_gate: closed: no training job .*?searche?s?\)", text).group(0))


def test_the_search_under_way_when_a_gate_runs_out_is_not_reported_as_failed(emulator, run_playbook):
    """Issue 41: every search answers in 3 s (the emulator's ``delay`` fault), so in a 6 s wait the second search, sent
    about 3.3 s in, is under way when the deadline passes and is cut short.  The gate says no job was found, not that
    the last search failed.

    The margins are the search's 3 s either way, not the schedule's: the first search would have to take over 5.8 s
    for the second to be the last one (the one with ``request_timeout`` past the deadline), and over 6 s to be cut
    itself."""
    value = unique("i38-slow-nothing")
    fault = emulator.add_fault(type="delay", target="search", seconds=3, count="always")
    try:
        result = run_playbook(gate_play(emulator, training_job_gate_timeout=6, training_job_gate_name=value))
    finally:
        emulator.control("DELETE", "/faults/%s" % fault)
    text = output(result)
    assert result.returncode != 0
    found = re.search(r"no training job named '%s' was found after waiting ([0-9.]+)s \(wait_timeout 6, ([0-9]+) searches\)" % value, text)
    assert found, text[-3000:]
    # No search outlived the wait by its 3 s: the one under way at the deadline was cut short there.
    assert int(found.group(2)) >= 2 and float(found.group(1)) < 6 + 3, "a search went on past the deadline: %s" % found.group(0)
    assert "search failed" not in text and "deadline passed" not in text, text[-3000:]


# -- item 2: a reused name without latest ----------------------------------------------------------------------


def test_a_reused_name_without_latest_says_how_many_matched_and_points_to_latest(emulator, run_playbook, reused):
    name, old, new = reused
    result = run_playbook(gate_play(emulator, training_job_gate_name=name, training_job_gate_timeout=5))
    text = output(result)
    assert result.returncode != 0 and old in text
    headline = "training_job_gate: closed: 1 of 2 training jobs not Completed; 2 jobs matched training_job_gate_name and each was waited on: "
    assert headline + "set training_job_gate_latest: true to gate on the newest only" in text, text[-3000:]
    assert_documented(re.search(r"training_job_gate: closed: 1 of 2 training jobs not Completed; [^\n\"]*", text).group(0))
    opened = run_playbook(gate_play(emulator, training_job_gate_name=name, training_job_gate_latest=True, training_job_gate_timeout=5))
    assert opened.returncode == 0, output(opened)[-3000:]
    assert "training_job_gate: open: 1 training job Completed after waiting" in opened.stdout and new in opened.stdout


def test_the_modules_message_points_to_latest(emulator, run_info_task, reused):
    name, _old, _new = reused
    result, _process = run_info_task(dict(emulator.connection("aksk"), name=name, wait=True, wait_timeout=5, wait_sleep=0.2, diagnostics=False))
    assert result["failed"]
    assert result["msg"].endswith("; the search named '%s' matched 2 jobs and each was waited on: set latest: true to wait on the newest only" % name)


# -- item 3: where a value came from ---------------------------------------------------------------------------


def info_play(task, module_defaults=None):
    play = {
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {"name": "read", "modelarts.training.modelarts_training_job_info": task, "register": "job", "ignore_errors": True},
            {"name": "show", "ansible.builtin.debug": {"msg": "MSG={{ job.msg | default('') }}"}},
        ],
    }
    if module_defaults:
        play["module_defaults"] = {"group/modelarts.training.modelarts": module_defaults}
    return [play]


def shown_message(result):
    found = re.search(r"MSG=(.*?)\"?$", result.stdout, re.M)
    assert found, output(result)[-3000:]
    return found.group(1)


@pytest.mark.parametrize("where", ["environment variable", "task option"])
def test_a_refused_endpoint_names_the_option_it_came_from(emulator, run_playbook, completed_job, where):
    port = closed_port()
    dead = "https://127.0.0.1:%d" % port
    task = dict(emulator.connection("aksk"), training_job_id=completed_job, backoff_retries=0)
    env = {}
    if where == "task option":
        task["endpoint"] = dead
        expected = "127.0.0.1:%d is the host of endpoint (task option): check it" % port
    else:
        del task["endpoint"]
        env["HUAWEICLOUD_MODELARTS_ENDPOINT"] = dead
        expected = "127.0.0.1:%d is the host of endpoint (environment variable HUAWEICLOUD_MODELARTS_ENDPOINT): check it" % port
    message = shown_message(run_playbook(info_play(task), env=env))
    assert "Connection refused" in message and expected in message, message
    assert_documented(message)


def test_an_unresolvable_endpoint_names_the_option_it_came_from(emulator, run_playbook, completed_job):
    task = dict(emulator.connection("aksk"), training_job_id=completed_job, backoff_retries=0, endpoint="https://modelarts.example.invalid")
    message = shown_message(run_playbook(info_play(task)))
    assert "modelarts.example.invalid is the host of endpoint (task option): check it" in message, message
    assert_documented(message)


def test_a_region_no_project_has_says_to_check_region_and_lists_the_projects_seen(emulator, run_playbook, completed_job):
    task = dict(emulator.connection("aksk"), training_job_id=completed_job, region="eu-west-101")
    del task["project_id"]
    message = shown_message(run_playbook(info_play(task)))
    expected = (
        r"look up the project of region eu-west-101 in IAM: no project named 'eu-west-101' is visible to these credentials \(they see [^)]*\b%s\b[^)]*\); "
        r"check region \(HUAWEICLOUD_SDK_REGION\), or set project_id \(HUAWEICLOUD_SDK_PROJECT_ID\)" % emulator.region
    )
    assert re.search(expected, message), message
    assert_documented(message)


def test_an_iam_password_refusal_says_what_to_check(emulator, run_playbook, completed_job):
    task = dict(emulator.connection("password"), training_job_id=completed_job, password="not-the-password")
    message = shown_message(run_playbook(info_play(task)))
    assert "get an IAM token for user %s: HTTP 401: " % emulator.username in message, message
    assert "401 401" not in message
    assert "(IAM refused the password flow: check domain_name (HUAWEICLOUD_DOMAIN_NAME), the account name; username (HUAWEICLOUD_USERNAME)" in message
    assert "not-the-password" not in output(run_playbook(info_play(task)))
    assert_documented(message)


def test_a_wrong_key_from_a_credentials_file_names_the_file(emulator, run_playbook, completed_job, tmp_path):
    path = tmp_path / "credentials"
    path.write_text("[basic]\nak = %s\nsk = %s\nproject_id = %s\n" % (emulator.ak, "Wr0ngSecretKey" * 3, emulator.project_id))
    task = dict(emulator.connection("aksk"), training_job_id=completed_job, credentials_file=str(path))
    del task["access_key"], task["secret_key"]
    message = shown_message(run_playbook(info_play(task)))
    assert "HTTP 401" in message and "(the access key and secret key were read from credentials file %s, ak and sk of its [basic] section" % path in message
    assert_documented(message)


# -- item 4: a typo inside training_job_gate_connection, and the module's own ------------------------------------


def test_a_typo_in_the_roles_connection_is_refused_by_its_name_before_any_request(emulator, run_playbook, completed_job):
    connection = dict(emulator_connection(emulator), regoin=emulator.region)
    before = emulator.mark()
    result = run_playbook(gate_play(emulator, connection=connection, training_job_gate_ids=[completed_job]))
    text = output(result)
    assert result.returncode != 0
    expected = (
        "training_job_gate: training_job_gate_connection: unknown option regoin (did you mean region?); "
        "its keys are options of modelarts.training.modelarts_training_job_info"
    )
    assert expected in text, text[-3000:]
    assert "Unsupported parameters" not in text
    assert not [entry for entry in emulator.requests(since=before) if completed_job in entry.get("path", "")], "no request was made"
    assert_documented(expected)


def test_an_option_the_role_sets_itself_is_refused_in_its_connection(emulator, run_playbook, completed_job):
    connection = dict(emulator_connection(emulator), wait_timeout=5)
    result = run_playbook(gate_play(emulator, connection=connection, training_job_gate_ids=[completed_job]))
    assert result.returncode != 0
    assert "training_job_gate_connection: unknown option wait_timeout (use training_job_gate_timeout)" in output(result), output(result)[-3000:]


def test_the_modules_unknown_option_names_the_closest_option(emulator, run_info_task, completed_job):
    result, _process = run_info_task(dict(emulator.connection("aksk"), training_job_id=completed_job, regoin="cn-north-4"))
    assert result["failed"]
    assert "module: regoin (did you mean region?). Supported parameters include: " in result["msg"], result["msg"]


# -- item 5: the Jinja tests given a list, or a registered result ----------------------------------------------


def test_the_jinja_tests_given_a_list_or_a_registered_result_say_what_to_use(emulator, run_playbook, completed_job):
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": emulator_connection(emulator)},
            "tasks": [
                {"name": "read", "modelarts.training.modelarts_training_job_info": {"training_job_ids": [completed_job]}, "register": "result"},
                {
                    "name": "a list",
                    "ansible.builtin.debug": {"msg": "{{ result.training_jobs is modelarts.training.completed }}"},
                    "ignore_errors": True,
                },
                {"name": "a result", "ansible.builtin.debug": {"msg": "{{ result is modelarts.training.failed }}"}, "ignore_errors": True},
                {"name": "an item", "ansible.builtin.debug": {"msg": "ITEM={{ result.training_jobs[0] is modelarts.training.completed }}"}},
            ],
        }
    ]
    result = run_playbook(play)
    text = output(result)
    assert result.returncode == 0, text[-3000:]
    assert "modelarts.training.completed: got a list of 1, not one job; test one item (jobs[0] is modelarts.training.completed), or pick" in text
    assert "select (jobs | select('modelarts.training.completed') | list)" in text
    assert "modelarts.training.failed: got the registered result of modelarts_training_job_info, not a job; test its .training_job" in text
    assert "_AnsibleLazyTemplate" not in text and "ITEM=True" in text


# -- item 6: the shipped gate playbook names the file it wrote -------------------------------------------------


def test_gate_deployment_reports_the_release_file_it_wrote(emulator, ansible_env, tmp_path, completed_job):
    import subprocess  # pylint: disable=import-outside-toplevel

    # A date that changes at each call, as the clock does between two uses a second apart.
    fake = tmp_path / "bin"
    fake.mkdir()
    counter = tmp_path / "calls"
    (fake / "date").write_text('#!/bin/sh\nn=$(cat %s 2>/dev/null || echo 0); n=$((n + 1)); echo $n > %s; echo "20260101T00000${n}Z"\n' % (counter, counter))
    (fake / "date").chmod(0o755)
    env = dict(ansible_env, TMPDIR=str(tmp_path), PATH=str(fake) + os.pathsep + ansible_env["PATH"], **emulator.env())
    variables = {"training_job_ids": [completed_job], "gate_timeout": 20, "gate_poll": 1}
    command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", GATE_PLAYBOOK, "-e", json.dumps(variables)]
    result = subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode == 0, output(result)[-3000:]
    written = sorted(path.name for path in (tmp_path / "modelarts-releases").glob("release-*.json"))
    reported = re.findall(r"Deployed release (\S+): .*?\((\S+)\)", result.stdout)
    assert len(written) == 1 and len(reported) == 1, (written, reported)
    release, path = reported[0]
    assert os.path.basename(path) == written[0] == "release-%s.json" % release
    assert json.loads((tmp_path / "modelarts-releases" / written[0]).read_text())["release"] == release


# -- item 8: the role is quiet when all is well ----------------------------------------------------------------


@pytest.mark.parametrize("how", ["module_defaults", "training_job_gate_connection"])
def test_the_role_says_what_it_waited_on_in_at_most_five_task_headers(emulator, run_playbook, completed_job, how):
    connection = emulator_connection(emulator) if how == "training_job_gate_connection" else None
    result = run_playbook(gate_play(emulator, connection=connection, training_job_gate_ids=completed_job))
    text = output(result)
    assert result.returncode == 0, text[-3000:]
    headers = task_headers(result.stdout)
    assert len(headers) <= 5, headers
    assert re.search(r"training_job_gate: open: 1 training job Completed after waiting \d+\.\ds: %s \(i38-done-\w+\)" % completed_job, text), text
    assert "skipping" not in result.stdout


def test_the_roles_refusals_come_before_any_request(emulator, run_playbook, completed_job):
    nothing = run_playbook(gate_play(emulator))
    assert nothing.returncode != 0
    assert "training_job_gate: no jobs to gate on; set training_job_gate_ids or training_job_gate_v1_jobs" in output(nothing)
    both = run_playbook(gate_play(emulator, training_job_gate_ids=[completed_job], training_job_gate_name="x"))
    assert both.returncode != 0
    assert "training_job_gate_name and/or training_job_gate_tags, not both" in output(both)


# -- item 10: a short CI log, the contract kept ----------------------------------------------------------------


def test_the_documented_recipe_keeps_a_failed_tasks_log_short_and_its_result_whole(emulator, run_playbook):
    with open(os.path.join(ROOT, "docs", "module.md")) as handle:
        module_page = handle.read()
    with open(os.path.join(ROOT, "docs", "getting_started.md")) as handle:
        getting_started = handle.read()
    section = module_page.partition("### Keeping a CI log short")[2].partition("\n## ")[0]
    for recipe in ("details_paths: []", "gate role", "ANSIBLE_CALLBACK_RESULT_FORMAT=yaml"):
        assert recipe in section, recipe
    assert getting_started.count("ANSIBLE_CALLBACK_RESULT_FORMAT=yaml ansible-playbook") == 1
    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique("i38-oom"), "phase": "Failed", "failure": {"exit_code": 137, "message": "OOMKilled"}}])

    def run(**options):
        task = dict(emulator.connection("aksk"), training_job_id=job, wait=True, wait_timeout=5, **options)
        play = [
            {
                "hosts": "localhost",
                "gather_facts": False,
                "tasks": [
                    {"name": "wait", "modelarts.training.modelarts_training_job_info": task, "register": "job", "ignore_errors": True},
                    {"name": "kept", "ansible.builtin.debug": {"msg": "KEPT={{ job.training_jobs[0].phase }} {{ job.training_job.failure_reason }}"}},
                ],
            }
        ]
        return run_playbook(play, env={"ANSIBLE_CALLBACK_RESULT_FORMAT": "yaml"} if options else None)

    plain, short = run(), run(details_paths=[])
    assert plain.returncode == 0 and short.returncode == 0
    for result in (plain, short):
        assert "KEPT=Failed task worker-0 exited with code 137: OOMKilled" in result.stdout, result.stdout[-2000:]
    assert len(short.stdout) * 5 < len(plain.stdout) * 3, (len(short.stdout), len(plain.stdout))
    assert max(len(line) for line in short.stdout.splitlines()) < 1000
