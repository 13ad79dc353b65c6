# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 20, item 3: a server that echoes the request in its error page shows no part of a secret.

A real HTTPS emulator answers with its ``echo`` fault: a 400 page quoting the request's headers and
body - the security token, the IAM token, the IAM password - as it is, JSON-escaped, as a Python
``repr``, percent-encoded or HTML-escaped. The module runs under ``ansible-playbook -vvv`` and the
whole output is scanned for any 10 characters of a secret in any of those forms.

Before the fix, a body was cut to 640 bytes and then masked: a security token of real length
(1-3 KB) or a token the cut fell inside was shown in part; and only the secret as it is was masked,
so the password in the echoed JSON body (``\\"`` for ``"``) or percent-encoded was shown whole.
"""

import hashlib
import html
import json
import re
from urllib.parse import quote, quote_plus

import pytest

from modelarts_emulator.launcher import running_emulator  # pylint: disable=import-error

from test_secret_hygiene import issue_token

JOB = "a1000000-0000-4000-8000-000000000001"
# An STS security token of real length (about 1.6 KB, base64 with + / =); secret keys and tokens of the canary kind.
SECURITY_TOKEN = "gQpj" + "".join(hashlib.sha256(b"echo-%d" % n).hexdigest()[:20] + "+/=" for n in range(70))
PASSWORD = 'PWecho7 "q\\k9/te" \u00e9+%3e x&<y>\'z'
MODULE = "modelarts.training.modelarts_training_job_info"


@pytest.fixture(scope="module")
def echo_emulator():
    """An HTTPS emulator whose temporary credentials carry a long security token and whose IAM password needs escaping."""
    args = ["--security-token", SECURITY_TOKEN, "--password", PASSWORD]
    with running_emulator(scenario="integration", tls=True, extra_args=args) as emu:
        yield emu


def forms(secret):
    """``secret`` as servers echo it: as it is, JSON-escaped (once, twice), repr, percent-encoded, HTML-escaped."""
    once = json.dumps(secret)[1:-1]
    found = {secret, once, json.dumps(once)[1:-1], repr(secret)[1:-1], repr(once)[1:-1], html.escape(secret), html.escape(once)}
    for text in (secret, once):
        found.update((quote(text), quote(text, safe=""), quote_plus(text), quote_plus(text, safe="")))
    return found


def leaks(output, secrets, size=10):
    """Every ``size``-character piece of a secret, in any of its forms, found in ``output``."""
    found = set()
    for secret in secrets:
        for form in forms(secret):
            for start in range(0, max(1, len(form) - size + 1)):
                piece = form[start : start + size]
                if piece in output:
                    found.add(piece)
    return sorted(found)


def task(emu, kind, name, register):
    """A module task reading the job with ``kind`` credentials (no retry: one request meets one fault)."""
    return {"name": name, MODULE: dict(emu.connection(kind), training_job_id=JOB, backoff_retries=0), "register": register, "ignore_errors": True}


def test_echoed_secrets_are_masked_whole_in_every_form(echo_emulator, run_playbook):
    emu = echo_emulator
    emu.reset()
    token = issue_token(emu)
    # A fault per task, consumed in order: ModelArts GETs for the token kinds, the IAM token request for the password.
    emu.add_fault(type="echo", job=JOB, headers=["x-security-token"])
    emu.add_fault(type="echo", job=JOB, headers=["x-auth-token"], pad=500)
    encodings = ("raw", "json", "repr", "percent", "html")
    for encoding in encodings:
        emu.add_fault(type="echo", target="iam", encoding=encoding, headers=[])
    tasks = [task(emu, "temporary", "echo security_token", "r_temporary"), task(emu, "aksk", "echo auth_token", "r_token")]
    del tasks[1][MODULE]["access_key"], tasks[1][MODULE]["secret_key"]
    tasks[1][MODULE]["auth_token"] = token
    tasks += [task(emu, "password", "echo password %s" % encoding, "r_password_%s" % encoding) for encoding in encodings]
    checks = ["r_temporary is failed", "r_token is failed"] + ["r_password_%s is failed" % encoding for encoding in encodings]
    checks += ["r_%s.msg is search('HTTP 400')" % name for name in ["temporary", "token"] + ["password_%s" % encoding for encoding in encodings]]
    tasks.append({"name": "every echo happened", "ansible.builtin.assert": {"that": checks}})
    tasks.append({"name": "show", "ansible.builtin.debug": {"msg": "{{ r_temporary.msg }} | {{ r_token.msg }} | {{ r_password_json.msg }}"}})
    result = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], verbosity=3)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "the request was:" in output, "the echo pages reached the messages"
    assert [entry["fault"] for entry in emu.requests()].count("echo") == 7
    found = dict((name, leaks(output, [secret])) for name, secret in (("security_token", SECURITY_TOKEN), ("auth_token", token), ("password", PASSWORD)))
    assert found == {"security_token": [], "auth_token": [], "password": []}
    assert re.search(r"x-security-token: \*{8}", output) and re.search(r"x-auth-token: \*{8}", output), output[-3000:]
