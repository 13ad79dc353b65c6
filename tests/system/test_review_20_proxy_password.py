# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 20, item 4: a proxy password holding ``/``, ``@``, ``#`` or ``?`` is never shown, however it is written.

``http://proxyuser:PrxKq7Lm/Zt8WmQ2@Hy6RcV3@proxy:3128`` is how many people write such a password. Before
the fix, ``-vvv`` showed it whole in the module's invocation (``proxy`` is shown, with its user-info
masked - up to the first ``/`` only), and the message quoted its first part (``'proxyuser:PrxKq7Lm' is
not a valid host or port``). Now the user-info is everything up to the last ``@``, it is masked in
every form, and a URL requests would misread fails before any request with a message that says to
percent-encode it, without quoting it. Written percent-encoded, the same password goes through a real
proxy that checks it. The runner's ``HTTPS_PROXY`` gets the same treatment, for the module and the lookup.
"""

import base64

from peers import connect_proxy

COMPLETED = "a1000000-0000-4000-8000-000000000001"
MODULE = "modelarts.training.modelarts_training_job_info"
USER = "proxyuser"
PASSWORD = "PrxKq7Lm/Zt8WmQ2@Hy6RcV3"
OTHER = "Jm4Tq8Wx#Bv2Nc6Ls?Rd5Pw9Ye"
FRAGMENTS = ["PrxKq7Lm", "Zt8WmQ2", "Hy6RcV3", "Jm4Tq8Wx", "Bv2Nc6Ls", "Rd5Pw9Ye"]
HINT = "percent-encode the reserved characters of its user name and password"


def basic(user, password):
    return base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def leaks(output):
    """Any piece of either password, or 12 characters of the Proxy-Authorization value they make."""
    found = [piece for piece in FRAGMENTS if piece in output]
    for secret in (basic(USER, PASSWORD), basic(USER, OTHER)):
        found += [secret[i : i + 12] for i in range(len(secret) - 11) if secret[i : i + 12] in output]
    return found


def authenticating_proxy():
    """A CONNECT proxy on 127.0.0.1 that wants ``Proxy-Authorization: Basic`` with USER and PASSWORD (407 otherwise)."""
    return connect_proxy(lambda headers: headers.get("proxy-authorization") == "Basic " + basic(USER, PASSWORD))


def test_a_proxy_password_with_reserved_characters_is_never_shown(emulator, run_playbook):
    with authenticating_proxy() as proxy:
        port = proxy.server_address[1]

        def read(name, url, register):
            options = dict(emulator.connection("aksk"), training_job_id=COMPLETED, proxy=url, backoff_retries=0, request_timeout=10)
            return {"name": name, MODULE: options, "register": register, "ignore_errors": True}

        tasks = [
            read("raw slash and at", "http://%s:%s@127.0.0.1:%d" % (USER, PASSWORD, port), "raw"),
            read("raw hash and question mark", "http://%s:%s@127.0.0.1:%d" % (USER, OTHER, port), "other"),
            read("percent-encoded", "http://%s:%s@127.0.0.1:%d" % (USER, PASSWORD.replace("/", "%2F").replace("@", "%40"), port), "encoded"),
            {
                "name": "show",
                "ansible.builtin.debug": {"msg": "RAW={{ raw.msg }} OTHER={{ other.msg }} ENCODED={{ encoded.training_job.phase | default('') }}"},
            },
        ]
        result = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], verbosity=3)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-6000:]
        assert leaks(output) == []
        assert "@127.0.0.1:%d" % port in output, "the proxy stays visible without its credentials"
        text = "proxy: it cannot be read as scheme://user:password@host:port: " + HINT
        assert "RAW=%s" % text in output and "OTHER=%s" % text in output and "ENCODED=Completed" in output, output[-3000:]
        assert proxy.seen == [("127.0.0.1:%d" % emulator.port, True)], "the misread URLs sent nothing; the encoded one went through, its password right"


def test_a_runner_proxy_variable_with_a_raw_password_is_never_shown(emulator, run_playbook):
    with authenticating_proxy() as proxy:
        url = "http://%s:%s@127.0.0.1:%d" % (USER, PASSWORD, proxy.server_address[1])
        env = dict(emulator.env("aksk"), HTTPS_PROXY=url, https_proxy=url, NO_PROXY="", no_proxy="")
        lookup = "lookup('modelarts.training.training_job', '%s', backoff_retries=0)" % COMPLETED
        tasks = [
            {"name": "module", MODULE: {"training_job_id": COMPLETED, "backoff_retries": 0}, "register": "module", "ignore_errors": True},
            {"name": "lookup", "ansible.builtin.set_fact": {"job": "{{ %s }}" % lookup}, "register": "looked", "ignore_errors": True},
            {"name": "show", "ansible.builtin.debug": {"msg": "MODULE={{ module.msg }} LOOKUP={{ looked is failed }}"}},
        ]
        result = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], env=env, verbosity=3)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-6000:]
        assert leaks(output) == []
        assert "MODULE=get training job %s: InvalidProxyURL: the https proxy from the environment" % COMPLETED in output, output[-3000:]
        assert HINT in output and "LOOKUP=True" in output and proxy.seen == []
