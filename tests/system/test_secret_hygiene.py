# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secret hygiene: no secret value ever reaches Ansible's output or the emulator's log.

A dedicated HTTPS emulator runs with recognisable canary credentials. The module, the lookup and the
role run under ``ansible-playbook -vvvv`` with every credential kind (AK/SK, temporary AK/SK with a
security token, IAM password, pre-issued IAM token), on success and on every failure path: job not
found, wrong secret, expired token, another tenant's project, 503 until retries run out, a strict
schema failure, a wait timeout, a fail_on phase, an untrusted certificate, bad option values and
conflicting credentials. Each playbook asserts that every path really happened; then stdout, stderr
and the emulator's request log are scanned for each secret, raw and URL-quoted, and for any IAM
token the emulator issued (they all start with ``MII``).
"""

import json
import os
import re
import ssl
import subprocess
import sys
import urllib.request
from urllib.parse import quote

import certifi
import pytest
import yaml

from conftest import emulator_connection, endpoint_tokens
from modelarts_emulator.launcher import running_emulator  # pylint: disable=import-error

CANARY = {
    "ak": "AKCANARYHYGIENE00001",
    "sk": "SK-CANARY-7f3e9a1c2b4d6e8f0a1b2c3d4e5f6a7b",
    "temp_ak": "TAKCANARYHYGIENE0001",
    "temp_sk": "TSK-CANARY-4c1d8e2f6a9b3c5d7e0f1a2b3c4d5e6f",
    "security_token": "ST-CANARY+gQpj/8d2e4f6a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e==",
    "username": "canary-robot",
    "password": "PW-CANARY-p@ss w0rd/+%3e",
    "domain_name": "canary-domain",
}
WRONG = {
    "sk": "SK-CANARY-WRONG-0d9c8b7a6f5e4d3c2b1a",
    "password": "PW-CANARY-WRONG-1a2b3c",
    "auth_token": "MIICANARYWRONGTOKEN0123456789abcdefghijklmnopqrstuvwxyz",
}
SECRETS = [CANARY["sk"], CANARY["temp_sk"], CANARY["security_token"], CANARY["password"]] + list(WRONG.values())
IAM_TOKEN = re.compile(r"MII[A-Za-z0-9+/=%]{60,}")
KINDS = ("aksk", "temporary", "password", "auth_token")

COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"
RUNNING = "a1000000-0000-4000-8000-000000000005"
UNAVAILABLE = "5e1f0000-0000-4000-8000-000000000001"  # 503 on every request (bound fault)
DRIFTED = "5e1f0000-0000-4000-8000-000000000002"  # wrong types on every request (bound fault)
MISSING = "00000000-dead-4000-8000-000000000000"


@pytest.fixture(scope="module")
def canary_emulator():
    """An HTTPS emulator whose primary account uses the canary credentials."""
    args = [
        "--access-key",
        CANARY["ak"],
        "--secret-key",
        CANARY["sk"],
        "--temp-access-key",
        CANARY["temp_ak"],
        "--temp-secret-key",
        CANARY["temp_sk"],
        "--security-token",
        CANARY["security_token"],
        "--username",
        CANARY["username"],
        "--password",
        CANARY["password"],
        "--domain-name",
        CANARY["domain_name"],
    ]
    with running_emulator(scenario="integration", tls=True, extra_args=args) as emu:
        yield emu


def issue_token(emu):
    """Get an IAM token with the canary password (to use as a pre-issued auth_token)."""
    body = {
        "auth": {
            "identity": {"methods": ["password"], "password": {"user": {"name": emu.username, "password": emu.password, "domain": {"name": emu.domain_name}}}},
            "scope": {"project": {"id": emu.project_id}},
        }
    }
    request = urllib.request.Request(emu.url + "/v3/auth/tokens", data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"})
    context = ssl.create_default_context(cafile=emu.ca_file)
    with urllib.request.urlopen(request, context=context, timeout=10) as response:  # nosec - loopback emulator
        return response.headers["X-Subject-Token"]


def connection(emu, kind, token=None):
    """Connection options of one credential kind, as a playbook variable, with quick retries."""
    return emulator_connection(emu, kind, token, backoff_retries=1, backoff_delay=0.01, backoff_max_delay=0.05)


def wrong_secret(kind):
    """The override that makes a kind's credentials wrong."""
    return {
        "aksk": {"secret_key": WRONG["sk"]},
        "temporary": {"secret_key": WRONG["sk"]},
        "password": {"password": WRONG["password"]},
        "auth_token": {"auth_token": WRONG["auth_token"]},
    }[kind]


def conflicting(kind):
    """Options that add a second credential kind to ``kind``."""
    if kind == "auth_token":
        return {"username": "someone", "password": WRONG["password"], "domain_name": "somewhere"}
    return {"auth_token": WRONG["auth_token"]}


def host_vars(emu, kinds, token):
    """One inventory host per credential kind: module/role connection dicts and the lookup's modelarts_* variables."""
    hosts = {}
    for kind in kinds:
        conn = connection(emu, kind, token)
        variables = {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "kind": kind,
            "conn": conn,
            "conn_wrong": dict(conn, **wrong_secret(kind)),
            "conn_conflict": dict(conn, **conflicting(kind)),
            "wrong_secret": wrong_secret(kind),
        }
        variables.update(("modelarts_%s" % name, value) for name, value in conn.items())
        hosts["kind_%s" % kind] = variables
    return hosts


@pytest.fixture
def run_hosts(ansible_env, tmp_path):
    """Run a playbook at -vvvv over an inventory of local hosts (one per credential kind), in parallel forks."""

    def run(playbook, hosts, env=None, timeout=300):
        (tmp_path / "playbook.yml").write_text(yaml.safe_dump(playbook, sort_keys=False))
        (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
        command = [
            os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
            "-i",
            str(tmp_path / "inventory.yml"),
            "--forks",
            str(max(1, len(hosts))),
            str(tmp_path / "playbook.yml"),
            "-vvvv",
        ]
        merged = dict(ansible_env, **(env or {}))
        return subprocess.run(command, env=merged, cwd=str(tmp_path), capture_output=True, text=True, timeout=timeout, check=False)

    return run


def faults(emu):
    """Reset the emulator and bind the 503 and drift faults to their jobs for good."""
    emu.reset()
    emu.add_fault(type="error", status=503, count=-1, job=UNAVAILABLE)
    emu.add_fault(type="drift", mode="wrong_types", count=-1, job=DRIFTED)


def scan(text, extra=()):
    """Every secret (raw or URL-quoted) and IAM token found in ``text``."""
    found = []
    for secret in list(SECRETS) + list(extra):
        for form in sorted({secret, quote(secret, safe=""), quote(secret)}):
            if form in text:
                found.append(form[:12] + "...")
    found.extend(match[:12] + "..." for match in IAM_TOKEN.findall(text))
    return found


PRINTED_TRACEBACK = re.compile(r'Traceback \(most recent call last\):[ \t]*\r?\n[ \t]*File "')


def assert_clean(result, emu, extra=()):
    """Neither the playbook's output nor the emulator's request log holds a secret (the jobs' endpoint tokens included)."""
    extra = list(extra) + endpoint_tokens(emu, [COMPLETED, FAILED, RUNNING])
    output = result.stdout + result.stderr
    assert "task path:" in output and "ansible-playbook [core" in output, "not run at -vvvv?"
    assert scan(output, extra) == [], scan(output, extra)
    log = json.dumps(emu.requests(), ensure_ascii=False)
    assert json.loads(log), "the emulator logged nothing"
    assert scan(log, extra) == [], scan(log, extra)
    # No Python traceback of the collection's own: a failed job's diagnostics may quote its training script's
    # traceback, but only as JSON strings, never as lines of Ansible's output.
    assert "The full traceback is" not in output and not PRINTED_TRACEBACK.search(output), output[-3000:]


# -- the module --------------------------------------------------------------------------------

MODULE = "modelarts.training.modelarts_training_job_info"
CONNECTION_KEYS = (
    "region",
    "project_id",
    "endpoint",
    "iam_endpoint",
    "ca_bundle",
    "access_key",
    "secret_key",
    "security_token",
    "auth_token",
    "username",
    "password",
    "domain_name",
    "backoff_retries",
    "backoff_delay",
    "backoff_max_delay",
)
OTHER_PROJECT = "817c519a596826b1ccc8630e7d28887e"

# (path, connection variable, task arguments, regex the failure message must match; None = success)
MODULE_PATHS = [
    ("success", "conn", {"training_job_id": COMPLETED}, None),
    ("wait_success", "conn", {"training_job_id": COMPLETED, "wait": True, "wait_timeout": 30}, None),
    ("not_found", "conn", {"training_job_id": MISSING}, "ModelArts.2775"),
    ("wrong_secret", "conn_wrong", {"training_job_id": COMPLETED}, "HTTP 401"),
    ("wrong_project", "conn", {"training_job_id": COMPLETED, "project_id": OTHER_PROJECT}, "another project|ModelArts.2786|HTTP 40[13]"),
    ("exhausted_503", "conn", {"training_job_id": UNAVAILABLE}, "HTTP 503.*gave up after 2 attempts"),
    ("schema_strict", "conn", {"training_job_id": DRIFTED}, r"\$\."),
    # wait_timeout counts the password kind's IAM token fetch too: 5 s, so that the job is read before the wait ends
    # (with 1 s a loaded machine ended it before the first read, whose message has no phase).
    ("timeout", "conn", {"training_job_id": RUNNING, "wait": True, "wait_timeout": 5, "wait_sleep": 0.2}, "Running"),
    ("fail_on", "conn", {"training_job_id": FAILED, "wait": True, "wait_timeout": 30}, "Failed"),
    ("tls_untrusted", "conn", {"training_job_id": COMPLETED, "ca_bundle": certifi.where()}, "ca_bundle"),
    ("bad_phase", "conn", {"training_job_id": COMPLETED, "wait_for": ["Complete"]}, "wait_for"),
    ("bad_timeout", "conn", {"training_job_id": COMPLETED, "request_timeout": 0}, "request_timeout"),
    ("bad_type", "conn", {"training_job_id": COMPLETED, "max_concurrency": "many"}, "max_concurrency"),
    ("conflicting", "conn_conflict", {"training_job_id": COMPLETED}, "conflicting credentials"),
]


def check_task(name, expect, value=None):
    """An assert that the path ``name`` ended as expected (so a skipped path cannot pass unnoticed)."""
    if expect is None:
        check = ["r_%s is succeeded" % name] + ([value] if value else [])
    else:
        check = ["r_%s is failed" % name, "r_%s.msg is search(%r)" % (name, expect)]
    return {"name": "check %s" % name, "ansible.builtin.assert": {"that": check, "quiet": True}}


def module_playbook(paths):
    """One module task per path, each followed by an assertion that the path happened."""
    tasks = []
    for name, conn, args, expect in paths:
        merged = dict((key, "{{ %s.%s | default(omit) }}" % (conn, key)) for key in CONNECTION_KEYS)
        merged.update(args)
        tasks.append({"name": "path %s" % name, MODULE: merged, "register": "r_%s" % name, "ignore_errors": expect is not None})
        tasks.append(check_task(name, expect, "r_%s.training_job.phase == 'Completed'" % name))
    return [{"hosts": "all", "gather_facts": False, "tasks": tasks}]


def test_module_every_kind_every_path(canary_emulator, run_hosts):
    """The module never shows a secret, whichever credential kind and whichever way it ends."""
    emu = canary_emulator
    faults(emu)
    token = issue_token(emu)
    result = run_hosts(module_playbook(MODULE_PATHS), host_vars(emu, KINDS, token))
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert result.stdout.count("check conflicting") >= 1 and "failed=0" in result.stdout
    assert_clean(result, emu, [token])


def test_module_expired_tokens(canary_emulator, run_hosts):
    """An expired pre-issued token fails cleanly; a password-issued one is renewed; no token is shown."""
    emu = canary_emulator
    faults(emu)
    token = issue_token(emu)
    emu.control("POST", "/tokens/expire")
    hosts = host_vars(emu, ("auth_token", "password"), token)
    play = module_playbook([("expired", "conn", {"training_job_id": COMPLETED}, "{{ (kind == 'auth_token') | ternary('APIG.0307', omit) }}")])
    # One playbook, two outcomes: compute the expectation per host.
    tasks = play[0]["tasks"]
    tasks[0]["ignore_errors"] = True
    tasks[1] = {
        "name": "check expired",
        "ansible.builtin.assert": {
            "quiet": True,
            "that": ["(kind == 'auth_token') == (r_expired is failed)", "kind == 'password' or r_expired.msg is search('APIG.0307|HTTP 401')"],
        },
    }
    result = run_hosts(play, hosts)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert_clean(result, emu, [token])


# -- the lookup ----------------------------------------------------------------------------------

LOOKUP = "modelarts.training.training_job"
RETRY = "backoff_retries=1, backoff_delay=0.01"
LOOKUP_PATHS = [
    ("success", "lookup('%s', '%s', field='phase')" % (LOOKUP, COMPLETED), None),
    ("v1_success", "lookup('%s', {'job_id': 2001, 'version_id': 1}, field='phase')" % LOOKUP, None),
    ("not_found", "lookup('%s', '%s')" % (LOOKUP, MISSING), "ModelArts.2775"),
    ("wrong_secret", "lookup('%s', '%s', **wrong_secret)" % (LOOKUP, COMPLETED), "HTTP 401"),
    ("wrong_project", "lookup('%s', '%s', project_id='%s')" % (LOOKUP, COMPLETED, OTHER_PROJECT), "another project|ModelArts.2786|HTTP 40[13]"),
    ("exhausted_503", "lookup('%s', '%s', %s)" % (LOOKUP, UNAVAILABLE, RETRY), "HTTP 503.*gave up after 2 attempts"),
    ("schema_strict", "lookup('%s', '%s')" % (LOOKUP, DRIFTED), r"\$\."),
    ("timeout", "lookup('%s', '%s', wait=true, wait_timeout=5, wait_sleep=0.2)" % (LOOKUP, RUNNING), "Running"),  # 5 s: as above
    ("fail_on", "lookup('%s', '%s', wait=true, wait_timeout=30)" % (LOOKUP, FAILED), "Failed"),
    ("tls_untrusted", "lookup('%s', '%s', ca_bundle='%s')" % (LOOKUP, COMPLETED, certifi.where()), "ca_bundle"),
    ("bad_phase", "lookup('%s', '%s', wait_for=['Complete'])" % (LOOKUP, COMPLETED), "Complete"),
    ("bad_timeout", "lookup('%s', '%s', request_timeout=0)" % (LOOKUP, COMPLETED), "request_timeout"),
    (
        "conflicting",
        "lookup('%s', '%s', auth_token='%s', username='u', password='%s', domain_name='d')" % (LOOKUP, COMPLETED, WRONG["auth_token"], WRONG["password"]),
        "conflicting credentials",
    ),
]


def lookup_env(emu):
    """HUAWEICLOUD_* variables with AK/SK credentials: the lookup's usual source when no modelarts_* variable is set."""
    env = emu.env("aksk")
    env.update(HUAWEICLOUD_SDK_AK=emu.ak, HUAWEICLOUD_SDK_SK=emu.sk)
    return env


def lookup_playbook(paths):
    """One set_fact per lookup path, each followed by an assertion that the path happened."""
    tasks = []
    for name, expression, expect in paths:
        tasks.append(
            {
                "name": "path %s" % name,
                "ansible.builtin.set_fact": {"v_%s" % name: "{{ %s }}" % expression},
                "register": "r_%s" % name,
                "ignore_errors": expect is not None,
            }
        )
        tasks.append(check_task(name, expect, "v_%s == 'Completed'" % name))
    return [{"hosts": "all", "gather_facts": False, "tasks": tasks}]


def test_lookup_every_kind_every_path(canary_emulator, run_hosts):
    """The lookup, with credentials from modelarts_* inventory variables (one host per kind), never shows a secret."""
    emu = canary_emulator
    faults(emu)
    token = issue_token(emu)
    result = run_hosts(lookup_playbook(LOOKUP_PATHS), host_vars(emu, KINDS, token))
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert_clean(result, emu, [token])


def test_lookup_from_environment(canary_emulator, run_hosts):
    """The lookup with AK/SK from HUAWEICLOUD_* environment variables (no modelarts_* variable) never shows a secret."""
    emu = canary_emulator
    faults(emu)
    hosts = {"env_aksk": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "kind": "aksk", "wrong_secret": wrong_secret("aksk")}}
    result = run_hosts(lookup_playbook(LOOKUP_PATHS), hosts, env=lookup_env(emu))
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert_clean(result, emu)


# -- the role --------------------------------------------------------------------------------------

ROLE = "modelarts.training.training_job_gate"
# (case, role variables, whether the gate opens; None: not checked here)
ROLE_CASES = [
    ("open", {"training_job_gate_ids": [COMPLETED]}, True),
    ("failed_job", {"training_job_gate_ids": [COMPLETED, FAILED]}, False),
    ("timeout", {"training_job_gate_ids": [RUNNING], "training_job_gate_timeout": 1}, False),
    ("unavailable", {"training_job_gate_ids": [UNAVAILABLE], "training_job_gate_timeout": 2}, False),
    ("wrong_secret", {"training_job_gate_ids": [COMPLETED], "training_job_gate_timeout": 2, "training_job_gate_connection": "{{ conn_wrong }}"}, False),
    # Whether this gate closes is tested in test_bad_inputs.py (the role's draft opens it: see there); here only hygiene counts.
    ("schema", {"training_job_gate_ids": [DRIFTED], "training_job_gate_timeout": 2}, None),
    ("not_found", {"training_job_gate_ids": [MISSING], "training_job_gate_timeout": 2}, False),
]


def role_playbook(cases):
    """Each case includes the role inside a block; a closed gate is rescued and recorded, then checked."""
    tasks = []
    for name, role_vars, expect_open in cases:
        variables = dict({"training_job_gate_poll": 0.2, "training_job_gate_connection": "{{ conn }}"}, **role_vars)
        tasks.append(
            {
                "name": "case %s" % name,
                "block": [
                    {"ansible.builtin.include_role": {"name": ROLE}, "vars": variables},
                    {"ansible.builtin.set_fact": {"gate_%s" % name: "open"}},
                ],
                "rescue": [{"ansible.builtin.set_fact": {"gate_%s" % name: "closed: {{ ansible_failed_result.msg | default('') }}"}}],
            }
        )
        check = ("gate_%s == 'open'" % name) if expect_open else ("gate_%s.startswith('closed')" % name)
        if expect_open is None:
            check = "gate_%s is defined" % name
        tasks.append({"name": "check %s" % name, "ansible.builtin.assert": {"that": [check], "quiet": True}})
    return [{"hosts": "all", "gather_facts": False, "tasks": tasks}]


def test_role_every_kind(canary_emulator, run_hosts):
    """The gate role, open and closed for each reason, never shows a secret of its connection variable."""
    emu = canary_emulator
    faults(emu)
    token = issue_token(emu)
    result = run_hosts(role_playbook(ROLE_CASES), host_vars(emu, KINDS, token))
    if "training_job_gate' was not found" in result.stdout + result.stderr:
        pytest.skip("the role is not in the staged collection")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert_clean(result, emu, [token])


def test_scanner_finds_planted_secrets():
    """The scan itself works: raw, URL-quoted and IAM-token forms are found."""
    assert scan("x %s y" % CANARY["password"])
    assert scan("x %s y" % quote(CANARY["security_token"], safe=""))
    assert scan("MII" + "A" * 80)
    assert scan(yaml.safe_dump({"k": CANARY["sk"]}))
    assert scan("nothing to see") == []


def test_a_leak_would_be_caught(canary_emulator, run_hosts):
    """Control: a playbook that prints a secret on purpose is caught by the same capture and scan."""
    emu = canary_emulator
    hosts = host_vars(emu, ("aksk",), None)
    play = [{"hosts": "all", "gather_facts": False, "tasks": [{"ansible.builtin.debug": {"msg": "{{ conn.secret_key | urlencode }}"}}]}]
    result = run_hosts(play, hosts)
    assert result.returncode == 0, result.stdout[-3000:]
    assert scan(result.stdout + result.stderr)


# -- the event source ---------------------------------------------------------------------------

# (path, argument overrides, seconds to let it run: sources that retry for ever are stopped then)
EDA_PATHS = [
    ("success", {"training_job_ids": [COMPLETED]}, 20),
    ("fail_on", {"training_job_ids": [FAILED]}, 20),
    ("not_found", {"training_job_ids": [MISSING]}, 20),
    ("wrong_secret", {"training_job_ids": [COMPLETED], "wrong": True}, 20),
    ("wrong_project", {"training_job_ids": [COMPLETED], "project_id": OTHER_PROJECT}, 20),
    ("exhausted_503", {"training_job_ids": [UNAVAILABLE]}, 1.5),
    ("schema_strict", {"training_job_ids": [DRIFTED]}, 1.5),
    ("tls_untrusted", {"training_job_ids": [COMPLETED], "ca_bundle": certifi.where()}, 20),
    ("bad_interval", {"training_job_ids": [COMPLETED], "interval": "soon"}, 20),
    ("bad_timeout", {"training_job_ids": [COMPLETED], "request_timeout": 0}, 20),
    ("bad_fail_on", {"training_job_ids": [COMPLETED], "fail_on": ["Broken"]}, 20),
    ("conflicting", {"training_job_ids": [COMPLETED], "conflict": True}, 20),
]


class _Queue(object):
    """Collects events as ansible-rulebook's queue would receive them."""

    def __init__(self):
        self.events = []

    async def put(self, event):
        """Keep one event."""
        self.events.append(event)


def run_source(src, args, seconds):
    """Run the source's ``main`` for at most ``seconds``; return (events, error text or None)."""
    import asyncio  # pylint: disable=import-outside-toplevel
    import traceback  # pylint: disable=import-outside-toplevel

    queue = _Queue()
    try:
        asyncio.run(asyncio.wait_for(src["main"](queue, args), seconds))
        error = None
    except (asyncio.TimeoutError, TimeoutError):
        error = "stopped by the test after %ss" % seconds
    except Exception as exc:  # pylint: disable=broad-except
        # ansible-rulebook prints a failing source's traceback: scan all of it.
        error = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return queue.events, error


def test_event_source_every_kind_every_path(canary_emulator, collection_root):
    """The event source (main() in-process, DEBUG logging of every logger) never puts a secret in an event, a log line or an error."""
    import logging  # pylint: disable=import-outside-toplevel
    import eda_helpers  # pylint: disable=import-outside-toplevel,import-error

    try:
        src = eda_helpers.load_source(collection_root)
    except (OSError, ImportError) as error:
        pytest.skip("the event source is not there yet: %s" % error)
    emu = canary_emulator
    faults(emu)
    token = issue_token(emu)
    records = []
    handler = logging.Handler(level=logging.DEBUG)
    handler.emit = lambda record: records.append(logging.Formatter("%(levelname)s %(name)s %(message)s").format(record))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    outcomes = {}
    try:
        for kind in KINDS:
            for name, overrides, seconds in EDA_PATHS:
                args = dict(connection(emu, kind, token), interval=0.2, stop_when_done=True)
                overrides = dict(overrides)
                if overrides.pop("wrong", False):
                    args.update(wrong_secret(kind))
                if overrides.pop("conflict", False):
                    args.update(conflicting(kind))
                args.update(overrides)
                events, error = run_source(src, args, seconds)
                outcomes[(kind, name)] = (events, error)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    text = "\n".join(records) + json.dumps(dict(("%s/%s" % key, value) for key, value in outcomes.items()), default=str)
    secrets = [token] + endpoint_tokens(emu, [COMPLETED, FAILED, RUNNING])
    assert scan(text, secrets) == [], scan(text, secrets)
    log = json.dumps(emu.requests(), ensure_ascii=False)
    assert scan(log, secrets) == []
    for kind in KINDS:
        events, error = outcomes[(kind, "success")]
        assert [event["modelarts"]["phase"] for event in events] == ["Completed"], (kind, error)
        events, error = outcomes[(kind, "fail_on")]
        assert [event["modelarts"]["phase"] for event in events] == ["Failed"], (kind, error)
        for name in ("wrong_secret", "wrong_project", "bad_interval", "bad_timeout", "bad_fail_on", "conflicting", "tls_untrusted", "not_found"):
            events, error = outcomes[(kind, name)]
            assert events == [] and error and not error.startswith("stopped by the test"), (kind, name, error)
