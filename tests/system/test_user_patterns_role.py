# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gate role used the way users' repositories use it (issue 12, items 2 and 3).

Every test runs a real ``ansible-playbook`` against the emulator from a directory laid out like a
user's repository::

    site.yml                          the play under test
    .vault_pass                       the vault password file (what a CI runner writes)
    inventory/hosts.yml
    inventory/group_vars/all/vault.yml   encrypted with the real ansible-vault
    inventory/group_vars/all/main.yml    modelarts_* values; the credentials are templates on the vault

and runs ``ansible-playbook -i inventory --vault-password-file .vault_pass site.yml`` in it.
"""

import json
import os
import ssl
import subprocess
import sys
import urllib.request

import pytest
import yaml

BIN = os.path.dirname(sys.executable)
ROLE = "modelarts.training.training_job_gate"
GROUP = "group/modelarts.training.modelarts"
MODULE = "modelarts.training.modelarts_training_job_info"
COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"
# Nothing listens there: a value that must lose to the one the test expects to win.
DEAD_ENDPOINT = "https://127.0.0.1:9"
# A rotated-out secret key kept in the vault next to the current one: signing with it gets a 401.
OLD_SECRET_KEY = "RotatedOutSecretKey000000000000000000001"

# What a user writes once in the play: every connection option from the inventory variables.
CONNECTION = {
    "region": "{{ modelarts_region }}",
    "project_id": "{{ modelarts_project_id }}",
    "access_key": "{{ modelarts_access_key }}",
    "secret_key": "{{ modelarts_secret_key }}",
    "endpoint": "{{ modelarts_endpoint }}",
    "iam_endpoint": "{{ modelarts_iam_endpoint }}",
    "ca_bundle": "{{ modelarts_ca_bundle }}",
}
CREDENTIALS = ("region", "project_id", "access_key", "secret_key")


def _only(*keys, **overrides):
    """CONNECTION restricted to ``keys`` (all of them when none are given), with ``overrides``."""
    options = {key: value for key, value in CONNECTION.items() if not keys or key in keys}
    options.update(overrides)
    return options


def _without(*keys):
    return {key: value for key, value in CONNECTION.items() if key not in keys}


@pytest.fixture
def user_repo(tmp_path, emulator, ansible_env):
    """A user's repository: inventory with vaulted credentials, and a runner for its site.yml."""
    repo = tmp_path / "repo"
    group_vars = repo / "inventory" / "group_vars" / "all"
    group_vars.mkdir(parents=True)
    (repo / "inventory" / "hosts.yml").write_text(
        yaml.safe_dump({"all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}})
    )
    password_file = repo / ".vault_pass"
    password_file.write_text("correct horse battery staple\n")
    password_file.chmod(0o600)

    vault = group_vars / "vault.yml"
    vault.write_text(
        yaml.safe_dump(
            {
                "vault_modelarts_access_key": emulator.ak,
                "vault_modelarts_secret_key": emulator.sk,
                "vault_modelarts_old_secret_key": OLD_SECRET_KEY,
            }
        )
    )
    subprocess.run(
        [os.path.join(BIN, "ansible-vault"), "encrypt", "--vault-password-file", str(password_file), str(vault)],
        cwd=str(repo),
        env=ansible_env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert vault.read_text().startswith("$ANSIBLE_VAULT;1.1;AES256"), "vault.yml was not encrypted"
    assert emulator.sk not in vault.read_text()

    (group_vars / "main.yml").write_text(
        "---\n"
        "modelarts_region: %s\n"
        "modelarts_project_id: %s\n"
        "modelarts_endpoint: %s\n"
        'modelarts_iam_endpoint: "{{ modelarts_endpoint }}"\n'
        "modelarts_ca_bundle: %s\n"
        'modelarts_access_key: "{{ vault_modelarts_access_key }}"\n'
        'modelarts_secret_key: "{{ vault_modelarts_secret_key }}"\n' % (emulator.region, emulator.project_id, emulator.url, emulator.ca_file)
    )

    def run(plays, env=None):
        (repo / "site.yml").write_text(yaml.safe_dump(plays, sort_keys=False))
        command = [os.path.join(BIN, "ansible-playbook"), "-i", "inventory", "--vault-password-file", ".vault_pass", "site.yml"]
        return subprocess.run(command, cwd=str(repo), env=dict(ansible_env, **(env or {})), capture_output=True, text=True, timeout=300, check=False)

    return run


def _play(tasks=None, roles=None, module_defaults=None):
    play = {"name": "Deploy the model", "hosts": "localhost", "gather_facts": False}
    if module_defaults is not None:
        play["module_defaults"] = module_defaults
    if roles is not None:
        play["roles"] = roles
    play["tasks"] = (tasks or []) + [
        {"name": "Deploy", "ansible.builtin.debug": {"msg": "GATE_OPENED={{ modelarts_training_jobs | map(attribute='phase') | join(',') }}"}}
    ]
    return [play]


def _include(connection=None, ids=(COMPLETED,), **task):
    """An include_role task for the gate (``connection`` None leaves training_job_gate_connection unset)."""
    role_vars = {"training_job_gate_ids": list(ids), "training_job_gate_poll": 0.1, "training_job_gate_timeout": 30}
    if connection is not None:
        role_vars["training_job_gate_connection"] = connection
    return dict({"name": "Gate on the training job", "ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars}, **task)


def _opened(result):
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "GATE_OPENED=Completed" in result.stdout, output


# Where users put module_defaults, with training_job_gate_connection left empty.
PLACEMENTS = {
    "play group, roles keyword": _play(
        module_defaults={GROUP: CONNECTION}, roles=[{"role": ROLE, "vars": {"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1}}]
    ),
    "play module name, include_role": _play(module_defaults={MODULE: CONNECTION}, tasks=[_include()]),
    "block group, include_role": _play(tasks=[{"name": "Gate", "module_defaults": {GROUP: CONNECTION}, "block": [_include()]}]),
    "block module name, import_role": _play(
        tasks=[
            {
                "name": "Gate",
                "module_defaults": {MODULE: CONNECTION},
                "block": [
                    {
                        "name": "Gate on the training job",
                        "ansible.builtin.import_role": {"name": ROLE},
                        "vars": {"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1},
                    }
                ],
            }
        ]
    ),
    "role keyword module_defaults": _play(
        roles=[{"role": ROLE, "module_defaults": {GROUP: CONNECTION}, "vars": {"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1}}]
    ),
    "import_role task module_defaults": _play(
        tasks=[
            {
                "name": "Gate on the training job",
                "ansible.builtin.import_role": {"name": ROLE},
                "module_defaults": {GROUP: CONNECTION},
                "vars": {"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1},
            }
        ]
    ),
    "include_role apply module_defaults": _play(
        tasks=[
            {
                "name": "Gate on the training job",
                "ansible.builtin.include_role": {"name": ROLE, "apply": {"module_defaults": {MODULE: CONNECTION}}},
                "vars": {"training_job_gate_ids": [COMPLETED], "training_job_gate_poll": 0.1},
            }
        ]
    ),
    # The keys are merged one by one: credentials from the play's group entry,
    # endpoints from the block's entry for the module name.
    "play group credentials, block module name endpoints": _play(
        module_defaults={GROUP: _only(*CREDENTIALS)},
        tasks=[{"name": "Gate", "module_defaults": {MODULE: _without(*CREDENTIALS)}, "block": [_include(connection={})]}],
    ),
}


@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_module_defaults_reach_the_role(user_repo, placement):
    """With training_job_gate_connection empty, module_defaults (group or module name) at every level work."""
    _opened(user_repo(PLACEMENTS[placement]))


# training_job_gate_connection sets one key; the rest comes from module_defaults.
OVERRIDES = {
    "endpoint over the play's group entry": _play(
        module_defaults={GROUP: _only(endpoint=DEAD_ENDPOINT, iam_endpoint=DEAD_ENDPOINT)},
        tasks=[_include(connection={"endpoint": "{{ modelarts_endpoint }}", "iam_endpoint": "{{ modelarts_iam_endpoint }}"})],
    ),
    "secret key over the play's group entry": _play(
        module_defaults={GROUP: _only(secret_key="{{ vault_modelarts_old_secret_key }}")},
        tasks=[_include(connection={"secret_key": "{{ vault_modelarts_secret_key }}"})],
    ),
    "endpoint over the block's module name entry": _play(
        module_defaults={GROUP: CONNECTION},
        tasks=[
            {"name": "Gate", "module_defaults": {MODULE: {"endpoint": DEAD_ENDPOINT}}, "block": [_include(connection={"endpoint": "{{ modelarts_endpoint }}"})]}
        ],
    ),
    "secret key over the role keyword's group entry": _play(
        roles=[
            {
                "role": ROLE,
                "module_defaults": {GROUP: _only(secret_key="{{ vault_modelarts_old_secret_key }}")},
                "vars": {
                    "training_job_gate_ids": [COMPLETED],
                    "training_job_gate_poll": 0.1,
                    "training_job_gate_connection": {"secret_key": "{{ vault_modelarts_secret_key }}"},
                },
            }
        ]
    ),
}


@pytest.mark.parametrize("override", list(OVERRIDES))
def test_connection_wins_key_by_key(user_repo, override):
    """A key of training_job_gate_connection wins over module_defaults; the other keys still come from them."""
    _opened(user_repo(OVERRIDES[override]))


def test_the_losing_value_really_fails(user_repo):
    """Control for the override tests: the values they override do close the gate on their own."""
    result = user_repo(_play(module_defaults={GROUP: _only(secret_key="{{ vault_modelarts_old_secret_key }}")}, tasks=[_include()]))
    assert result.returncode != 0
    assert "GATE_OPENED" not in result.stdout
    assert "training_job_gate: closed" in result.stdout + result.stderr


RESCUE_ASSERTIONS = [
    "ansible_failed_result.msg is string",
    "'%s' in ansible_failed_result.msg" % FAILED,
    "ansible_failed_result.msg.splitlines() | length == 2",
    "ansible_failed_result.msg.splitlines()[0] is search('^training_job_gate: closed: 1 of 2 training jobs not Completed$')",
    "ansible_failed_result.msg.splitlines()[1] is search('phase-failed')",
    "ansible_failed_result.msg.splitlines()[1] is search('Failed')",
    "'%s' not in ansible_failed_result.msg" % COMPLETED,
    "training_job_gate_messages == ansible_failed_result.msg.splitlines()[1:]",
]


def test_rescue_reads_the_gate_message_as_a_string(user_repo):
    """A rescue block can search the message for a job id; the lines are also in training_job_gate_messages."""
    plays = _play(
        tasks=[
            {
                "name": "Gate, or tell the team",
                "block": [_include(connection=CONNECTION, ids=(COMPLETED, FAILED))],
                "rescue": [
                    {"name": "The message names the failed job", "ansible.builtin.assert": {"that": RESCUE_ASSERTIONS}},
                    {"name": "Notify", "ansible.builtin.debug": {"msg": "RESCUED {{ training_job_gate_messages | length }} line(s)"}},
                    {"name": "Stop here", "ansible.builtin.meta": "end_play"},
                ],
            }
        ]
    )
    result = user_repo(plays)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "RESCUED 1 line(s)" in result.stdout, output
    assert "GATE_OPENED" not in result.stdout


def test_console_shows_lines_not_a_list(user_repo):
    """Unrescued, the play fails with the headline and one line per job: no Python list repr."""
    result = user_repo(_play(tasks=[_include(connection=CONNECTION, ids=(FAILED,))]))
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "training_job_gate: closed: 1 of 1 training jobs not Completed" in output
    assert "['training_job_gate" not in output and '["training_job_gate' not in output, output
    assert FAILED in output


def test_messages_fact_is_empty_when_the_gate_opens(user_repo):
    """training_job_gate_messages is reset by each run: [] once the gate opens, even after a closed gate."""
    plays = _play(
        tasks=[
            {
                "name": "A first gate that closes",
                "block": [_include(connection=CONNECTION, ids=(FAILED,))],
                "rescue": [{"name": "Seen", "ansible.builtin.assert": {"that": ["training_job_gate_messages | length == 1"]}}],
            },
            _include(connection=CONNECTION),
            {"name": "No stale lines", "ansible.builtin.assert": {"that": ["training_job_gate_messages == []"]}},
        ]
    )
    _opened(user_repo(plays))


def _issue_token(emu):
    """A pre-issued IAM token, as a CI job would fetch one in an earlier step."""
    body = {
        "auth": {
            "identity": {"methods": ["password"], "password": {"user": {"name": emu.username, "password": emu.password, "domain": {"name": emu.domain_name}}}},
            "scope": {"project": {"id": emu.project_id}},
        }
    }
    request = urllib.request.Request(emu.url + "/v3/auth/tokens", data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=emu.ca_file), timeout=10) as response:  # nosec
        return response.headers["X-Subject-Token"]


@pytest.mark.parametrize("where", ["training_job_gate_connection", "module_defaults"])
def test_ci_environment_credentials_lose_to_the_play(user_repo, emulator, where):
    """On a CI runner with HUAWEICLOUD_SDK_AK/SK set, an auth_token given to the role is used (item 4)."""
    token = {"auth_token": _issue_token(emulator)}
    if where == "module_defaults":
        plays = _play(module_defaults={GROUP: token}, tasks=[_include()])
    else:
        plays = _play(tasks=[_include(connection=token)])
    _opened(user_repo(plays, env=emulator.env("aksk")))
