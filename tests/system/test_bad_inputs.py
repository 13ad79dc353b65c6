# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad inputs end to end (docs/reliability.md): what a user sees for each, against the emulator.

In-process (the staged collection's client and pipeline against a dedicated HTTPS emulator): hostile
job ids, clock skew, expired tokens, HTML and truncated bodies, a 10 MB document, TLS trust. Through
``ansible-playbook``: wrong types and values for every module option, unknown phases for the module,
lookup, role and Jinja tests, empty/huge/unicode ids.
"""

import datetime
import json
import os
import subprocess
import sys

import certifi
import pytest
import yaml

from modelarts_emulator.launcher import running_emulator  # pylint: disable=import-error

COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"
BIG = "b1000000-0000-4000-8000-000000000010"
DRIFTED = "5e1f0000-0000-4000-8000-000000000002"


@pytest.fixture(scope="module")
def emu():
    """A dedicated HTTPS emulator (this module injects faults and changes settings)."""
    with running_emulator(scenario="integration", tls=True) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def mt(collection_root):
    """The staged collection's module_utils: client, errors, query."""
    if collection_root not in sys.path:
        sys.path.insert(0, collection_root)
    # pylint: disable=import-outside-toplevel,import-error
    from ansible_collections.modelarts.training.plugins.module_utils.service import client
    from ansible_collections.modelarts.training.plugins.module_utils import errors
    from ansible_collections.modelarts.training.plugins.module_utils.door import options, query

    return type("MT", (), {"client": client, "errors": errors, "options": options, "query": query})


def params(emu, **extra):
    """AK/SK connection options for the emulator, no retries unless asked."""
    options = dict(emu.connection("aksk"), backoff_retries=0, backoff_delay=0.01, backoff_max_delay=0.05)
    options.update(extra)
    return options


def fetch(mt, options, key, **kwargs):
    """One query through the pipeline; returns the QueryResult (never raises for API errors)."""
    attempts = []
    client = mt.client.ModelArtsClient(*mt.options.connection_parts(options), trace=attempts.append, **kwargs)
    try:
        result = mt.query.query_jobs(client, [key])
    finally:
        client.close()
    result.attempts = [line for line in attempts if "/v3/" not in line]
    return result


# -- hostile ids ---------------------------------------------------------------------------------

HOSTILE_IDS = [
    "../training-jobs/%s" % COMPLETED,
    "..",
    ".",
    "%s/../%s" % (FAILED, COMPLETED),
    "a/../../../v3/projects",
    "%s?x=1" % COMPLETED,
    "%s#frag" % COMPLETED,
    "100%",
    "%2e%2e",
    "%2F" + COMPLETED,
    "a\r\nX-Injected: 1",
    "\u8bad\u7ec3-\u30b8\u30e7\u30d6-\U0001f680",
    "x" * 5000,
    "x" * 70000,
    " %s" % COMPLETED,
]


@pytest.mark.parametrize("job_id", HOSTILE_IDS, ids=lambda v: repr(v)[:24])
def test_hostile_id_reaches_only_its_own_url(emu, mt, job_id):
    """Each id is one escaped path segment: a clean not-found (or 414 for 70,000 characters), never another job or API."""
    since = emu.mark()
    result = fetch(mt, params(emu), job_id)
    if not job_id.strip("."):
        # "%2E%2E" would be decoded back into a parent path on the way: the client refuses dot segments outright.
        assert not result.ok and type(result.first_error()).__name__ == "ConnectionConfigError", result.items
        assert emu.requests(since=since) == []
        return
    assert not result.ok and isinstance(result.first_error(), mt.errors.ModelArtsError), result.items
    error = result.first_error()
    assert error.not_found or error.status == 414, str(error)
    assert "\n" not in result.msg
    log = emu.requests(since=since)
    if error.status == 414:
        # The emulator's HTTP server refuses a request line over 65,536 bytes before routing (and logging) it.
        assert log == [] and len(job_id) > 65536
        return
    assert len(log) == 1, log
    segments = log[0]["path"].split("/")
    assert segments[:4] == ["", "v2", emu.project_id, "training-jobs"] and len(segments) == 5 and not log[0]["query"], log[0]["path"][:300]
    assert log[0]["job"] in (None, job_id) and "X-Injected" not in log[0]["headers"]


# -- authentication and clock ---------------------------------------------------------------------


@pytest.mark.parametrize("minutes", [-20, 20])
def test_clock_skew_is_explained(emu, mt, minutes):
    """A clock off by 20 minutes: APIG.0303 with a hint about this machine's clock, not retried."""

    def skewed():
        return datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes)

    result = fetch(mt, params(emu, backoff_retries=3), COMPLETED, utcnow=skewed)
    assert not result.ok and "clock" in result.msg and "APIG.0303" in result.msg, result.msg
    assert len(result.attempts) == 1


def test_expired_auth_token_and_renewed_password_token(emu, mt):
    """A pre-issued token that expired fails with APIG.0307 and a hint; a password-issued one is renewed."""
    options = params(emu, access_key=None, secret_key=None, username=emu.username, password=emu.password, domain_name=emu.domain_name)
    client = mt.client.ModelArtsClient(*mt.options.connection_parts(options))
    assert mt.query.query_jobs(client, [COMPLETED]).ok
    token = client.current_credentials().auth_token
    emu.control("POST", "/tokens/expire")
    assert mt.query.query_jobs(client, [COMPLETED]).ok, "the password token was not renewed"
    assert client.current_credentials().auth_token != token
    client.close()
    emu.control("POST", "/tokens/expire")
    result = fetch(mt, params(emu, access_key=None, secret_key=None, auth_token=token), COMPLETED)
    assert not result.ok and "APIG.0307" in result.msg and "auth_token" in result.msg, result.msg
    assert token not in result.msg


# -- bodies -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault, fragment",
    [
        ({"type": "html", "status": 502}, "HTTP 502 with a non-JSON body: '<html>"),
        ({"type": "html", "status": 200}, "HTTP 200 but the body is not valid JSON"),
        ({"type": "truncate", "mode": "body"}, "not valid JSON"),
        ({"type": "truncate", "mode": "short_read"}, "ChunkedEncodingError"),
    ],
)
def test_html_and_truncated_bodies_fail_cleanly_after_retries(emu, mt, fault, fragment):
    """Faults on every attempt: one clean line naming the operation, a short excerpt, and the attempts made."""
    emu.reset()
    emu.add_fault(job=COMPLETED, count=-1, **fault)
    try:
        result = fetch(mt, params(emu, backoff_retries=2), COMPLETED)
    finally:
        emu.control("DELETE", "/faults")
    assert not result.ok and fragment in result.msg, result.msg
    assert "gave up after 3 attempts" in result.msg and len(result.attempts) == 3
    assert len(result.msg) < 600 and "\n" not in result.msg


def test_ten_megabyte_document_is_read(mt, tmp_path):
    """A 10 MB job document (a huge description, loaded from a scenario file) is read and normalised."""
    scenario = tmp_path / "big.json"
    scenario.write_text(json.dumps({"jobs": [{"id": BIG, "name": "big", "phase": "Completed", "description": "d" * (10 * 1024 * 1024)}]}))
    with running_emulator(scenario=str(scenario), tls=True) as big:
        result = fetch(mt, params(big), BIG)
    assert result.ok, result.msg
    assert result.items[0]["phase"] == "Completed" and len(result.items[0]["details"]["metadata"]["description"]) == 10 * 1024 * 1024


# -- TLS ------------------------------------------------------------------------------------------


def test_tls_untrusted_certificate_is_refused_with_a_hint(emu, mt):
    """validate_certs: true without the emulator's CA: refused at once (not retried), naming ca_bundle."""
    result = fetch(mt, params(emu, ca_bundle=None, backoff_retries=3), COMPLETED)
    assert not result.ok and "CERTIFICATE_VERIFY_FAILED" in result.msg and "ca_bundle (HUAWEICLOUD_CA_BUNDLE)" in result.msg, result.msg
    assert len(result.attempts) == 1


def test_tls_ca_bundle_fixes_it_and_wins_over_requests_ca_bundle(emu, mt, monkeypatch):
    """ca_bundle trusts the emulator; it also wins over REQUESTS_CA_BUNDLE in both directions."""
    assert fetch(mt, params(emu), COMPLETED).ok
    assert fetch(mt, params(emu, ca_bundle=None, validate_certs=False), COMPLETED).ok
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", emu.ca_file)
    refused = fetch(mt, params(emu, ca_bundle=certifi.where()), COMPLETED)
    assert not refused.ok and "CERTIFICATE_VERIFY_FAILED" in refused.msg
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", certifi.where())
    assert fetch(mt, params(emu), COMPLETED).ok


def test_tls_missing_ca_bundle_file(emu, mt):
    """A ca_bundle path that does not exist: a configuration error naming the option and the file, before any request."""
    since = emu.mark()
    with pytest.raises(Exception) as info:
        fetch(mt, params(emu, ca_bundle="/nonexistent/ca.pem", backoff_retries=3), COMPLETED)
    assert type(info.value).__name__ == "ConnectionConfigError"
    assert "ca_bundle (HUAWEICLOUD_CA_BUNDLE): no such file or directory: /nonexistent/ca.pem" in str(info.value)
    assert emu.requests(since=since) == []


# -- options through ansible-playbook ---------------------------------------------------------------

MODULE = "modelarts.training.modelarts_training_job_info"
# (row, task arguments over the module_defaults connection, regex the message must match)
MODULE_ROWS = [
    ("training_job_id empty", {"training_job_id": ""}, "training_job_id must not be empty"),
    ("training_job_id blank", {"training_job_id": "   "}, "training_job_id must not be empty"),
    # Ansible turns a list given for a str option into its text; no job id looks like that, so no request is made.
    ("training_job_id a list", {"training_job_id": ["a", "b"]}, r"training_job_id: \"\['a', 'b'\]\" is not a training job id"),
    ("training_job_id huge", {"training_job_id": "x" * 5000}, r"training_job_id: 'x+\.\.\.' is not a training job id"),
    ("training_job_id unicode", {"training_job_id": "\u8bad\u7ec3-\U0001f680"}, "is not a training job id"),
    ("training_job_id with ../", {"training_job_id": "../training-jobs/" + COMPLETED}, "is not a training job id"),
    ("training_job_ids empty element", {"training_job_ids": [COMPLETED, ""]}, r"training_job_ids\[1\] must not be empty"),
    ("training_job_ids dict element", {"training_job_ids": [{"id": 1}]}, r"training_job_ids\[0\]: \"\{'id': 1\}\" is not a training job id"),
    ("name empty", {"name": ""}, "name must not be empty"),
    ("job_id not an int", {"job_id": "abc", "version_id": 1}, "job_id"),
    ("job_id negative", {"job_id": -1, "version_id": 1}, "job_id must not be negative"),
    ("job_id without version_id", {"job_id": 2001}, "job_id.*version_id|version_id.*job_id"),
    ("v1_jobs missing version_id", {"v1_jobs": [{"job_id": 2001}]}, "version_id"),
    ("v1_jobs unknown key", {"v1_jobs": [{"job_id": 2001, "version_id": 1, "extra": 2}]}, "extra"),
    ("two selectors", {"training_job_id": COMPLETED, "name": "x"}, "mutually exclusive"),
    ("no selector", {}, "one of the following is required"),
    ("validate unknown", {"training_job_id": COMPLETED, "validate": "loose"}, "validate"),
    ("wait not a bool", {"training_job_id": COMPLETED, "wait": "maybe"}, "wait"),
    ("wait_for unknown phase", {"training_job_id": COMPLETED, "wait_for": ["Complete"]}, "wait_for"),
    ("fail_on unknown phase", {"training_job_id": COMPLETED, "fail_on": ["Broken"]}, "fail_on"),
    ("wait_for empty", {"training_job_id": COMPLETED, "wait_for": []}, "wait_for must name at least one phase"),
    ("wait_for overlaps fail_on", {"training_job_id": COMPLETED, "wait_for": ["Failed"]}, "must not share phases"),
    ("wait_timeout negative", {"training_job_id": COMPLETED, "wait_timeout": -1}, "wait_timeout"),
    ("wait_timeout not a number", {"training_job_id": COMPLETED, "wait_timeout": "soon"}, "wait_timeout"),
    ("wait_sleep zero", {"training_job_id": COMPLETED, "wait_sleep": 0}, "wait_sleep"),
    ("wait_sleep_max negative", {"training_job_id": COMPLETED, "wait_sleep_max": -1}, "wait_sleep_max"),
    ("max_concurrency zero", {"training_job_id": COMPLETED, "max_concurrency": 0}, "max_concurrency"),
    ("max_concurrency huge", {"training_job_id": COMPLETED, "max_concurrency": 100000}, "max_concurrency"),
    ("unknown option", {"training_job_id": COMPLETED, "regoin": "x"}, "regoin"),
    ("validate_certs not a bool", {"training_job_id": COMPLETED, "validate_certs": "perhaps"}, "validate_certs"),
    ("connect_timeout zero", {"training_job_id": COMPLETED, "connect_timeout": 0}, "connect_timeout"),
    ("request_timeout not a number", {"training_job_id": COMPLETED, "request_timeout": "x"}, "request_timeout"),
    ("backoff_retries negative", {"training_job_id": COMPLETED, "backoff_retries": -1}, "backoff_retries"),
    ("backoff_delay negative", {"training_job_id": COMPLETED, "backoff_delay": -1}, "backoff_delay"),
    ("backoff_max_delay negative", {"training_job_id": COMPLETED, "backoff_max_delay": -1}, "backoff_max_delay"),
    ("endpoint not a URL", {"training_job_id": COMPLETED, "endpoint": "not a url"}, "not a url|endpoint"),
    ("endpoint unreachable", {"training_job_id": COMPLETED, "endpoint": "https://127.0.0.1:9", "backoff_retries": 0}, "ConnectionError|refused"),
    ("proxy unreachable", {"training_job_id": COMPLETED, "proxy": "http://127.0.0.1:9", "backoff_retries": 0}, "ProxyError|refused"),
    ("ca_bundle missing file", {"training_job_id": COMPLETED, "ca_bundle": "/nonexistent/ca.pem"}, "/nonexistent/ca.pem"),
    ("untrusted certificate", {"training_job_id": COMPLETED, "ca_bundle": certifi.where()}, "CERTIFICATE_VERIFY_FAILED.*ca_bundle"),
    ("no credentials", {"training_job_id": COMPLETED, "access_key": "{{ omit }}", "secret_key": "{{ omit }}"}, "no credentials"),
    ("incomplete credentials", {"training_job_id": COMPLETED, "secret_key": "{{ omit }}"}, "incomplete credentials.*secret_key"),
    # Long values: Ansible masks a no_log value wherever it appears, so a one-letter secret would garble the message.
    (
        "security_token alone",
        {
            "training_job_id": COMPLETED,
            "access_key": "{{ omit }}",
            "secret_key": "{{ omit }}",
            "security_token": "a-security-token-long-enough-not-to-be-masked-everywhere",
        },
        r"security_token \(task option\) is set without access_key at the same level",
    ),
    (
        "conflicting credentials",
        {"training_job_id": COMPLETED, "auth_token": "an-iam-token-long-enough-not-to-be-masked-everywhere"},
        "conflicting credentials.*HUAWEICLOUD_",
    ),
    ("no region or endpoint", {"training_job_id": COMPLETED, "region": "{{ omit }}", "endpoint": "{{ omit }}", "project_id": "{{ omit }}"}, "region"),
    ("wrong project", {"training_job_id": COMPLETED, "project_id": "817c519a596826b1ccc8630e7d28887e"}, "ModelArts.2786.*another project"),
    ("wrong secret key", {"training_job_id": COMPLETED, "secret_key": "WRONG"}, "APIG.0301.*secret_key"),
]
OTHER_ROWS = [
    ("lookup unknown phase", "{{ lookup('modelarts.training.training_job', '%s', wait_for=['Complete']) }}" % COMPLETED, "unknown phase 'Complete'"),
    ("lookup empty term", "{{ lookup('modelarts.training.training_job', '') }}", "empty"),
    ("lookup null term", "{{ lookup('modelarts.training.training_job', None) }}", "expected a training job id"),
    ("lookup bad v1 term", "{{ lookup('modelarts.training.training_job', {'job_id': 'x', 'version_id': 1}) }}", "term 0: job_id must be an integer, got 'x'"),
    ("lookup unknown field", "{{ lookup('modelarts.training.training_job', '%s', field='nope') }}" % COMPLETED, "field 'nope'"),
    ("jinja test unknown phase", "{{ 'Complete' is modelarts.training.completed }}", "unknown phase 'Complete'"),
    ("jinja test wrong type", "{{ 5 is modelarts.training.terminal }}", "expected a training job item or a phase string"),
    ("jinja failed unknown phase", "{{ 'Failed' is modelarts.training.failed(['Broke']) }}", "unknown phase 'Broke'"),
]
ROLE_ROWS = [
    ("role unknown phase", {"training_job_gate_ids": [COMPLETED], "training_job_gate_require": ["Complete"]}, "training_job_gate_require"),
    ("role no jobs", {}, "no jobs to gate on"),
    ("role timeout not a number", {"training_job_gate_ids": [COMPLETED], "training_job_gate_timeout": "soon"}, "training_job_gate_timeout"),
]
FORKS = 4


def slug(row):
    """A variable-safe name for a row."""
    return "".join(ch if ch.isalnum() else "_" for ch in row)


def options_playbook(emu):
    """Rows spread over FORKS local hosts; each host writes its rows' messages to rows_<host>.json."""
    connection = dict(emu.connection("aksk"), backoff_retries=1, backoff_delay=0.01, backoff_max_delay=0.05)
    tasks = []
    names = []
    rows = [("module", row, args, rx) for row, args, rx in MODULE_ROWS] + [("expr", row, expr, rx) for row, expr, rx in OTHER_ROWS]
    rows += [("role", row, variables, rx) for row, variables, rx in ROLE_ROWS]
    for index, (kind, row, payload, _regex) in enumerate(rows):
        name = "r_" + slug(row)
        names.append((row, name))
        when = "inventory_hostname == 'h%d'" % (index % FORKS)
        if kind == "module":
            task = {MODULE: payload}
        elif kind == "expr":
            task = {"ansible.builtin.set_fact": {"v_" + slug(row): payload}}
        else:
            task = {
                "block": [{"ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"}, "vars": payload}],
                "rescue": [{"ansible.builtin.set_fact": {name: "{{ ansible_failed_result }}"}}],
            }
            task.update({"name": row, "when": when})
            tasks.append(task)
            continue
        task.update({"name": row, "register": name, "ignore_errors": True, "when": when})
        tasks.append(task)
    summary = "{{ {%s} | to_json }}" % ", ".join(
        "%r: (%s.msg | default(None)) if (%s is defined and %s.failed | default(false)) else None" % (row, name, name, name) for row, name in names
    )
    tasks.append({"name": "write the messages", "ansible.builtin.copy": {"content": summary, "dest": "{{ playbook_dir }}/rows_{{ inventory_hostname }}.json"}})
    play = {"hosts": "all", "gather_facts": False, "module_defaults": {"group/modelarts.training.modelarts": connection}, "tasks": tasks}
    return [play], rows


def test_every_option_with_wrong_types_and_values(emu, ansible_env, tmp_path):
    """Each row fails the task with a message that names the problem; none with a traceback or a crash."""
    emu.reset()
    playbook, rows = options_playbook(emu)
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump(playbook, sort_keys=False))
    lookup_vars = {
        "modelarts_region": emu.region,
        "modelarts_project_id": emu.project_id,
        "modelarts_endpoint": emu.url,
        "modelarts_ca_bundle": emu.ca_file,
        "modelarts_access_key": emu.ak,
        "modelarts_secret_key": emu.sk,
    }
    hosts = dict(("h%d" % n, dict(lookup_vars, ansible_connection="local", ansible_python_interpreter=sys.executable)) for n in range(FORKS))
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    command = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        str(tmp_path / "inventory.yml"),
        "--forks",
        str(FORKS),
        str(tmp_path / "playbook.yml"),
    ]
    result = subprocess.run(command, env=ansible_env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    seen = {}
    for index in range(FORKS):
        for row, message in json.loads((tmp_path / ("rows_h%d.json" % index)).read_text()).items():
            if message is not None:
                seen[row] = message
    import re  # pylint: disable=import-outside-toplevel

    problems = []
    for _kind, row, _payload, regex in rows:
        message = seen.get(row)
        if message is None or not re.search(regex, str(message), re.S) or "Traceback" in str(message):
            problems.append((row, regex, message))
    (tmp_path / "rows.json").write_text(json.dumps(seen, indent=1, sort_keys=True))
    print(json.dumps(seen, indent=1, sort_keys=True))
    assert problems == [], problems
    assert "Traceback" not in result.stdout + result.stderr


# -- the role's verdict ----------------------------------------------------------------------------


def test_role_closes_the_gate_on_a_strict_schema_failure(emu, run_playbook):
    """validate=strict fails the module on a drifted response; the gate must not open on it."""
    emu.reset()
    emu.add_fault(type="drift", mode="wrong_types", count=-1, job=DRIFTED)
    connection = emu.connection("aksk")
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"},
                    "vars": {
                        "training_job_gate_ids": [DRIFTED],
                        "training_job_gate_connection": connection,
                        "training_job_gate_timeout": 5,
                        "training_job_gate_poll": 0.2,
                    },
                },
                {"ansible.builtin.debug": {"msg": "GATE-OPENED"}},
            ],
        }
    ]
    result = run_playbook(play)
    emu.control("DELETE", "/faults")
    assert "GATE-OPENED" not in result.stdout and result.returncode != 0, result.stdout[-3000:]
