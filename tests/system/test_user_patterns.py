# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module and the lookup used the way a user's repository uses them.

Each test builds a small repository: an inventory directory whose ``group_vars/all/vault.yml`` is
encrypted with the real ``ansible-vault``, a ``group_vars/all/main.yml`` that templates the vaulted
values into ``modelarts_*`` variables, plays with ``module_defaults``, a CI runner's
``HUAWEICLOUD_*`` variables beside a task's own credentials, and ``rescue:`` blocks that read the
failure.  They run real ``ansible-playbook`` against the HTTPS emulator.
"""

import json
import os
import ssl
import subprocess
import sys
import urllib.request

import pytest
import yaml

from conftest import endpoint_tokens, run_in_group
from peers import connect_proxy

BIN = os.path.dirname(sys.executable)
COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"
VAULT_PASSWORD = "correct horse battery staple"


class Repo(object):
    """A user's repository in a temporary directory: inventory, vault, playbooks; ``play()`` runs ansible-playbook."""

    def __init__(self, root, ansible_env):
        self.root = root
        self.env = dict(ansible_env)
        self.password_file = root / "vault-pass.txt"
        self.password_file.write_text(VAULT_PASSWORD + "\n")
        (root / "inventory" / "group_vars" / "all").mkdir(parents=True)
        (root / "inventory" / "hosts.yml").write_text(
            yaml.safe_dump({"all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}})
        )

    def group_vars(self, main, vault):
        """Write group_vars/all/main.yml in clear and group_vars/all/vault.yml encrypted with ansible-vault."""
        folder = self.root / "inventory" / "group_vars" / "all"
        (folder / "main.yml").write_text(yaml.safe_dump(main, sort_keys=False))
        vault_file = folder / "vault.yml"
        vault_file.write_text(yaml.safe_dump(vault))
        subprocess.run(
            [os.path.join(BIN, "ansible-vault"), "encrypt", "--vault-password-file", str(self.password_file), str(vault_file)],
            env=self.env,
            check=True,
            capture_output=True,
        )
        assert vault_file.read_text().startswith("$ANSIBLE_VAULT;"), "the vault file must really be encrypted"

    def play(self, plays, env=None, verbosity=0):
        """Run the plays; return the completed process (stdout and stderr as text)."""
        path = self.root / "site.yml"
        path.write_text(yaml.safe_dump(plays, sort_keys=False))
        command = [os.path.join(BIN, "ansible-playbook"), "-i", str(self.root / "inventory"), "--vault-password-file", str(self.password_file), str(path)]
        if verbosity:
            command.append("-" + "v" * verbosity)
        return run_in_group(command, dict(self.env, **(env or {})), str(self.root), 300)


@pytest.fixture
def repo(tmp_path, ansible_env):
    return Repo(tmp_path, ansible_env)


def vaulted_vars(emulator, **extra):
    """group_vars that reference the vault the way users write them, and the vault itself."""
    main = {
        "modelarts_region": "{{ vault_region }}",
        "modelarts_project_id": "{{ vault_project }}",
        "modelarts_access_key": "{{ vault_ak }}",
        "modelarts_secret_key": "{{ vault_sk }}",
        "modelarts_endpoint": "{{ emulator_url }}",
        "modelarts_iam_endpoint": "{{ emulator_url }}",
        "modelarts_ca_bundle": "{{ emulator_ca }}",
        "emulator_url": emulator.url,
        "emulator_ca": emulator.ca_file,
    }
    main.update(extra)
    vault = {"vault_region": emulator.region, "vault_project": emulator.project_id, "vault_ak": emulator.ak, "vault_sk": emulator.sk}
    return main, vault


def debug_play(expression, **play):
    return [
        dict(
            {
                "name": "check",
                "hosts": "localhost",
                "gather_facts": False,
                "tasks": [{"name": "show", "ansible.builtin.debug": {"msg": "RESULT={{ %s }}" % expression}}],
            },
            **play,
        )
    ]


def iam_token(emulator):
    """A pre-issued IAM token, as a CI system would hand one to a job."""
    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": emulator.username, "password": emulator.password, "domain": {"name": emulator.domain_name}}},
            },
            "scope": {"project": {"id": emulator.project_id}},
        }
    }
    request = urllib.request.Request(
        emulator.url + "/v3/auth/tokens", data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=emulator.ca_file))
    )
    with opener.open(request, timeout=10) as response:
        return response.headers["X-Subject-Token"]


def ci_runner_env(emulator):
    """What a CI runner exports for another tenant: AK/SK that must lose to the task's own credentials."""
    return {"HUAWEICLOUD_SDK_AK": emulator.other.ak, "HUAWEICLOUD_SDK_SK": emulator.other.sk, "HUAWEICLOUD_SDK_REGION": emulator.region}


# -- templated, vaulted inventory variables (issue 12, item 1) -----------------------------------


def test_lookup_renders_vaulted_modelarts_variables(emulator, repo):
    repo.group_vars(*vaulted_vars(emulator))
    result = repo.play(debug_play("lookup('modelarts.training.training_job', '%s', field='phase')" % COMPLETED))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout
    assert emulator.sk not in result.stdout + result.stderr


def test_templated_validate_certs_true_keeps_verification_on(emulator, repo):
    # Without the CA bundle the emulator's certificate is not trusted: a lookup that succeeds here
    # would mean verification was silently turned off by an unrendered "{{ verify_tls }}".
    main, vault = vaulted_vars(emulator, modelarts_validate_certs="{{ verify_tls }}", verify_tls=True)
    del main["modelarts_ca_bundle"]
    repo.group_vars(main, vault)
    result = repo.play(
        debug_play("lookup('modelarts.training.training_job', '%s', field='phase')" % COMPLETED), env={"REQUESTS_CA_BUNDLE": "", "CURL_CA_BUNDLE": ""}
    )
    assert result.returncode != 0, result.stdout
    assert "CERTIFICATE_VERIFY_FAILED" in result.stdout + result.stderr or "certificate is not trusted" in result.stdout + result.stderr


@pytest.mark.parametrize(
    "where,env,extra,named",
    [
        ("environment", {"HUAWEICLOUD_VALIDATE_CERTS": "ture"}, {}, "validate_certs (environment variable HUAWEICLOUD_VALIDATE_CERTS)"),
        ("variable", {}, {"modelarts_validate_certs": "{{ verify_tls }}", "verify_tls": "ture"}, "validate_certs (variable modelarts_validate_certs)"),
    ],
)
def test_lookup_refuses_a_boolean_that_is_not_one(emulator, repo, where, env, extra, named):
    repo.group_vars(*vaulted_vars(emulator, **extra))
    result = repo.play(debug_play("lookup('modelarts.training.training_job', '%s', field='phase')" % COMPLETED), env=env)
    assert result.returncode != 0, where
    assert named in result.stdout + result.stderr
    assert "must be a boolean" in result.stdout + result.stderr


def test_module_refuses_a_bad_boolean_from_the_environment(emulator, repo):
    repo.group_vars(*vaulted_vars(emulator))
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"name": "read", "modelarts.training.modelarts_training_job_info": dict(emulator.connection("aksk"), training_job_id=COMPLETED)}],
        }
    ]
    result = repo.play(plays, env={"HUAWEICLOUD_VALIDATE_CERTS": "ture"})
    assert result.returncode != 0
    assert "validate_certs (environment variable HUAWEICLOUD_VALIDATE_CERTS) must be a boolean" in result.stdout


# -- explicit credentials over the CI runner's environment (issue 12, item 4) -----------------------


def test_module_defaults_auth_token_wins_over_runner_aksk(emulator, repo):
    repo.group_vars({"emulator_url": emulator.url}, {"vault_token": iam_token(emulator)})
    connection = {
        "region": emulator.region,
        "project_id": emulator.project_id,
        "endpoint": emulator.url,
        "iam_endpoint": emulator.url,
        "ca_bundle": emulator.ca_file,
        "auth_token": "{{ vault_token }}",
    }
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": connection},
            "tasks": [
                {"name": "read", "modelarts.training.modelarts_training_job_info": {"training_job_id": COMPLETED}, "register": "job"},
                {"name": "show", "ansible.builtin.debug": {"msg": "RESULT={{ job.training_job.phase }}"}},
            ],
        }
    ]
    result = repo.play(plays, env=ci_runner_env(emulator))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout


def test_lookup_keyword_credentials_win_over_runner_aksk(emulator, repo):
    main, vault = vaulted_vars(emulator)
    for name in ("modelarts_access_key", "modelarts_secret_key"):
        del main[name]
    repo.group_vars(main, dict(vault, vault_token=iam_token(emulator)))
    result = repo.play(
        debug_play("lookup('modelarts.training.training_job', '%s', field='phase', auth_token=vault_token)" % COMPLETED), env=ci_runner_env(emulator)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout


def test_variables_credentials_win_over_runner_aksk(emulator, repo):
    repo.group_vars(*vaulted_vars(emulator))
    result = repo.play(debug_play("lookup('modelarts.training.training_job', '%s', field='phase')" % COMPLETED), env=ci_runner_env(emulator))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed" in result.stdout


def test_two_kinds_in_one_place_still_conflict(emulator, repo):
    repo.group_vars(*vaulted_vars(emulator))
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "read",
                    "modelarts.training.modelarts_training_job_info": dict(emulator.connection("aksk"), auth_token="also-a-token", training_job_id=COMPLETED),
                }
            ],
        }
    ]
    result = repo.play(plays)
    assert result.returncode != 0
    assert "conflicting credentials (given as task options)" in result.stdout


# -- failures read in a rescue block (issue 12, item 7) --------------------------------------------


def test_rescue_reads_the_failure_and_the_single_job(emulator, repo):
    repo.group_vars(*vaulted_vars(emulator))
    connection = dict(emulator.connection("aksk"))
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": connection},
            "tasks": [
                {
                    "name": "gate",
                    "block": [
                        {
                            "name": "wait",
                            "modelarts.training.modelarts_training_job_info": {"training_job_id": FAILED, "wait": True, "wait_timeout": 30, "wait_sleep": 1},
                        },
                    ],
                    "rescue": [
                        {
                            "name": "inspect",
                            "ansible.builtin.assert": {
                                "that": [
                                    "ansible_failed_result.msg is string",
                                    "'%s' in ansible_failed_result.msg" % FAILED,
                                    "ansible_failed_result.training_job.phase == 'Failed'",
                                    "ansible_failed_result.training_job.id == '%s'" % FAILED,
                                    "ansible_failed_result.job_messages | length == 1",
                                ]
                            },
                        },
                        {"name": "report", "ansible.builtin.debug": {"msg": "RESCUED"}},
                    ],
                }
            ],
        }
    ]
    result = repo.play(plays)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESCUED" in result.stdout


# -- warnings and hidden secrets (issue 12 item 6, issue 13 items 3 and 4) ----------------------------


def test_unverified_tls_warns_once_through_ansible(emulator, repo):
    main, vault = vaulted_vars(emulator, modelarts_validate_certs=False)
    repo.group_vars(main, vault)
    expression = "[lookup('modelarts.training.training_job', '%s', field='phase'), lookup('modelarts.training.training_job', '%s', field='phase')]"
    result = repo.play(debug_play(expression % (COMPLETED, COMPLETED)))
    assert result.returncode == 0, result.stdout + result.stderr
    output = result.stdout + result.stderr
    assert "errantly sent data directly to stderr" not in output
    assert "InsecureRequestWarning" not in output
    assert output.count("validate_certs is false") == 1, output


def test_endpoint_tokens_are_masked_unless_asked_for(emulator, repo):
    repo.group_vars(*vaulted_vars(emulator))
    read = {"name": "read", "modelarts.training.modelarts_training_job_info": dict(emulator.connection("aksk"), training_job_id=COMPLETED), "register": "job"}
    opt_in = {
        "name": "read with tokens",
        "modelarts.training.modelarts_training_job_info": dict(emulator.connection("aksk"), training_job_id=COMPLETED, include_endpoint_tokens=True),
        "register": "open",
        "no_log": True,
    }
    show = {
        "name": "show",
        "ansible.builtin.debug": {
            "msg": "MASKED={{ job.training_job.details.endpoints.jupyter_lab.token }} "
            "LOOKUP={{ lookup('modelarts.training.training_job', '%s', field='details.endpoints.tensorboard.token') }} "
            "OPEN={{ (open.training_job.details.endpoints.jupyter_lab.token | length) > 8 }}" % COMPLETED
        },
    }
    result = repo.play([{"hosts": "localhost", "gather_facts": False, "tasks": [read, opt_in, show]}], verbosity=3)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "MASKED=******** LOOKUP=******** OPEN=True" in result.stdout
    for token in endpoint_tokens(emulator, [COMPLETED]):
        assert token not in result.stdout + result.stderr


def test_proxy_credentials_are_hidden_at_vvvv(emulator, repo):
    repo.group_vars(*vaulted_vars(emulator))
    proxy = "http://proxyuser:Pr0xy-Secret-Word@127.0.0.1:%d" % emulator.port
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "read through a proxy",
                    "modelarts.training.modelarts_training_job_info": dict(
                        emulator.connection("aksk"), training_job_id=COMPLETED, proxy=proxy, backoff_retries=0, request_timeout=5
                    ),
                    "ignore_errors": True,
                }
            ],
        }
    ]
    result = repo.play(plays, verbosity=4)
    output = result.stdout + result.stderr
    assert "Pr0xy-Secret-Word" not in output
    assert "127.0.0.1:%d" % emulator.port in output, "the proxy without its credentials stays visible for debugging"


def test_a_netrc_file_does_not_touch_modelarts_requests(emulator, repo, tmp_path):
    # Many workstations and CI images carry a ~/.netrc, often with a catch-all ``default`` entry for
    # git or a package index. requests would add that login as HTTP Basic auth to every request,
    # replacing the AK/SK signature and sending the netrc password to ModelArts beside a token.
    netrc = tmp_path / "netrc"
    netrc.write_text("default login ci-bot password netrc-password-never-sent\n")
    netrc.chmod(0o600)
    repo.group_vars(*vaulted_vars(emulator))
    module = "modelarts.training.modelarts_training_job_info"
    token = {"name": "password", module: dict(emulator.connection("password"), training_job_id=COMPLETED), "register": "t"}
    aksk = {"name": "aksk", module: dict(emulator.connection("aksk"), training_job_id=COMPLETED), "register": "s"}
    lookup = "lookup('modelarts.training.training_job', '%s', field='phase')" % COMPLETED
    show = {"name": "show", "ansible.builtin.debug": {"msg": "RESULT={{ t.training_job.phase }} {{ s.training_job.phase }} {{ %s }}" % lookup}}
    since = emulator.mark()
    result = repo.play([{"hosts": "localhost", "gather_facts": False, "tasks": [token, aksk, show]}], env={"NETRC": str(netrc)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "RESULT=Completed Completed Completed" in result.stdout
    gets = [entry for entry in emulator.requests(since=since, path="/training-jobs/") if entry["method"] == "GET"]
    assert len(gets) == 3, gets
    for entry in gets:
        authorization = dict((name.lower(), value) for name, value in entry["headers"].items()).get("authorization")
        assert authorization is None or authorization.startswith("SDK-HMAC-SHA256"), entry["headers"]


def test_the_runner_proxy_variables_carry_every_request_and_the_proxy_option_wins(emulator, repo):
    # A CI runner behind a corporate proxy exports HTTPS_PROXY (and NO_PROXY for internal hosts);
    # the client reads them once per host, and a task's own ``proxy`` applies even to NO_PROXY hosts.
    repo.group_vars(*vaulted_vars(emulator))
    module = "modelarts.training.modelarts_training_job_info"
    lookup = "lookup('modelarts.training.training_job', '%s', field='phase')" % COMPLETED
    emulator_host = "127.0.0.1:%d" % emulator.port

    def plays(**options):
        read = {"name": "read", module: dict(emulator.connection("password"), training_job_id=COMPLETED, **options), "register": "job"}
        show = {"name": "show", "ansible.builtin.debug": {"msg": "RESULT={{ job.training_job.phase }} {{ %s }}" % lookup}}
        return [{"hosts": "localhost", "gather_facts": False, "tasks": [read, show]}]

    with connect_proxy() as proxy:
        result = repo.play(plays(), env={"HTTPS_PROXY": proxy.url, "NO_PROXY": ""})
        assert result.returncode == 0, result.stdout + result.stderr
        assert "RESULT=Completed Completed" in result.stdout
        # The module (IAM token, then the job) and the lookup each opened their tunnels through the proxy.
        assert len(proxy.seen) >= 2 and set(target for target, _allowed in proxy.seen) == {emulator_host}, proxy.seen

        del proxy.seen[:]
        result = repo.play(plays(), env={"HTTPS_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"})
        assert result.returncode == 0, result.stdout + result.stderr
        assert proxy.seen == [], "NO_PROXY still applies"

        result = repo.play(plays(proxy=proxy.url), env={"NO_PROXY": "127.0.0.1"})
        assert result.returncode == 0, result.stdout + result.stderr
        assert proxy.seen and set(target for target, _allowed in proxy.seen) == {emulator_host}, (
            "the task's proxy option wins over NO_PROXY; the lookup, without it, goes direct"
        )
