# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 57: two shapes of the production record that users have and no other test ran, against the emulator.

1. The record key vaulted in an inventory's ``group_vars/all.yml`` (``ansible-vault encrypt_string``), the play run
   with ``--vault-password-file`` and -vvvv: gate with the role (``training_job_gate_production``), deploy, promote
   (``tasks_from: promote``).  The promoted record's ``hmac_sha256`` is the HMAC-SHA256 of the key over the canonical
   JSON docs/metrics.md describes; the key never shows; a worse run against it is refused.  A wrong vault password
   fails the run before any deployment or promotion, and a vault holding another key closes the gate: production is
   unchanged either way.
2. The module's ``baseline: {record: ...}`` with the endpoint and project from module options and the AK/SK from
   ``HUAWEICLOUD_SDK_AK``/``HUAWEICLOUD_SDK_SK``; and a task whose ``secret_key`` option is another, wrong one than the
   environment's: the option wins, the service's 401 is the message, the gate is closed, no secret shows.  Both ways
   (``modelarts_training_in_process``).
"""

import hashlib
import hmac
import json
import os
import uuid

import pytest

from conftest import BIN, run_in_group
from plays import ACC, epochs, new_id, info, play, save, run

WAYS = pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
ROLE = "modelarts.training.training_job_gate"
GATE = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
KEY = "rk57v-%s" % uuid.uuid4().hex
VAULT_PASSWORD = "vp57-%s" % uuid.uuid4().hex
WRONG_SECRET = "Wr0ngSecret57%s" % uuid.uuid4().hex[:16]
# The digests are over the record without them (docs/metrics.md, "The decision record").
DIGESTS = ("sha256", "hmac_sha256")


def churn(emulator, name, **values):
    """Completed runs of one name, created an hour apart in the order given, each with its val_accuracy: their ids."""
    ids = dict((label, new_id()) for label in values)
    emulator.add_jobs(
        [
            {"id": ids[label], "name": name, "phase": "Completed", "created_ago": "%dh" % (len(values) - index), "metric_lines": epochs(0.5, value)}
            for index, (label, value) in enumerate(values.items())
        ]
    )
    return ids


def load(path):
    with open(str(path), encoding="utf-8") as handle:
        return json.load(handle)


def canonical(record):
    return json.dumps(dict((k, v) for k, v in record.items() if k not in DIGESTS), sort_keys=True, separators=(",", ":")).encode("utf-8")


def gate_deploy_promote(emulator, job_id, production, release, first=False):
    """The user's play: the key is nowhere in it - group_vars/all.yml of the inventory holds it, vaulted."""
    role_vars = {
        "training_job_gate_ids": [job_id],
        "training_job_gate_metrics": GATE,
        "training_job_gate_production": str(production),
        "training_job_gate_poll": 0.2,
        "training_job_gate_timeout": 60,
    }
    if first:
        role_vars["training_job_gate_baseline"] = {"record": str(production), "required": False}
    tasks = [
        {"name": "Gate", "ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars},
        {
            "name": "Deploy",
            "ansible.builtin.copy": {"dest": str(release), "mode": "0644", "content": "{{ modelarts_training_jobs | map(attribute='id') | list | to_json }}"},
        },
        {
            "name": "Promote",
            "ansible.builtin.include_role": {"name": ROLE, "tasks_from": "promote"},
            "vars": {"training_job_gate_production": str(production)},
        },
    ]
    return play(emulator, tasks)


class Vaulted:
    """An inventory directory whose group_vars/all.yml holds training_job_gate_record_key encrypted with
    ansible-vault, and the playbooks run against it with --vault-password-file and -vvvv."""

    def __init__(self, tmp_path, env):
        self.tmp_path = tmp_path
        self.env = env
        self.inventory = tmp_path / "inventory"
        (self.inventory / "group_vars").mkdir(parents=True)
        (self.inventory / "hosts.ini").write_text("localhost ansible_connection=local\n")
        self.password_file = self.password(VAULT_PASSWORD, "vault-pass")
        self.vault_key(KEY)

    def password(self, text, name):
        path = self.tmp_path / name
        path.write_text(text + "\n")
        os.chmod(str(path), 0o600)
        return path

    def vault_key(self, key):
        """group_vars/all.yml: the record key as ``ansible-vault encrypt_string`` writes it (the password file's)."""
        command = [
            os.path.join(BIN, "ansible-vault"),
            "encrypt_string",
            "--vault-password-file",
            str(self.password_file),
            "--name",
            "training_job_gate_record_key",
            key,
        ]
        made = run_in_group(command, self.env, str(self.tmp_path), 60)
        assert made.returncode == 0 and "$ANSIBLE_VAULT;" in made.stdout, made.stderr[-2000:]
        (self.inventory / "group_vars" / "all.yml").write_text("---\n" + made.stdout)
        assert key not in (self.inventory / "group_vars" / "all.yml").read_text()

    def play(self, plays, password_file=None, name="playbook.yml"):
        path = self.tmp_path / name
        path.write_text(json.dumps(plays))
        command = [os.path.join(BIN, "ansible-playbook"), "-i", str(self.inventory), str(path), "-vvvv"]
        command += ["--vault-password-file", str(password_file or self.password_file)]
        result = run_in_group(command, self.env, str(self.tmp_path), 300)
        return result, result.stdout + result.stderr


# -- 1. the record key vaulted in group_vars ------------------------------------------------------------------------


def test_a_vaulted_record_key_in_group_vars_signs_the_production_record_and_never_shows(emulator, ansible_env, tmp_path):
    ids = churn(emulator, "churn-vaulted", first=0.86, worse=0.84)
    production = tmp_path / "production" / "churn-model.json"
    production.parent.mkdir()
    vaulted = Vaulted(tmp_path, ansible_env)

    result, text = vaulted.play(gate_deploy_promote(emulator, ids["first"], production, tmp_path / "release-1.json", first=True))
    assert result.returncode == 0, text[-4000:]
    promoted = load(production)
    assert promoted["decision"] == "open" and [job["id"] for job in promoted["jobs"]] == [ids["first"]] and promoted["promoted_at"]
    # The docs' canonical JSON: the record without sha256 and hmac_sha256, keys sorted, no spaces.
    assert promoted["sha256"] == hashlib.sha256(canonical(promoted)).hexdigest()
    assert promoted["hmac_sha256"] == hmac.new(KEY.encode("utf-8"), canonical(promoted), hashlib.sha256).hexdigest()
    assert "training_job_gate: promoted %s (churn-vaulted) to %s" % (ids["first"], production) in text
    assert KEY not in text and VAULT_PASSWORD not in text and KEY not in production.read_text()
    kept = production.read_text()

    # The next night's worse run is compared with the promoted 0.86 (the record verifies with the vaulted key): refused.
    result, text = vaulted.play(gate_deploy_promote(emulator, ids["worse"], production, tmp_path / "release-2.json"))
    assert result.returncode != 0, text[-4000:]
    assert "val_accuracy is 0.84, improving on the baseline's 0.86 by -0.02" in text, text[-4000:]
    assert "hmac_sha256 does not verify" not in text, text[-4000:]
    assert not (tmp_path / "release-2.json").exists() and production.read_text() == kept
    assert KEY not in text and VAULT_PASSWORD not in text


def test_a_wrong_vault_password_or_a_vaulted_other_key_promotes_nothing(emulator, ansible_env, tmp_path):
    ids = churn(emulator, "churn-vault-wrong", first=0.86, better=0.9)
    production = tmp_path / "production.json"
    vaulted = Vaulted(tmp_path, ansible_env)
    result, text = vaulted.play(gate_deploy_promote(emulator, ids["first"], production, tmp_path / "release-1.json", first=True))
    assert result.returncode == 0, text[-4000:]
    kept = production.read_text()

    # A better run, but the vault password file is not the one the key was encrypted with: the run fails, and the
    # deployment and the promotion never ran.
    wrong = vaulted.password("not-the-vault-password-57", "wrong-pass")
    result, text = vaulted.play(gate_deploy_promote(emulator, ids["better"], production, tmp_path / "release-2.json"), password_file=wrong)
    assert result.returncode != 0, text[-4000:]
    assert "Decryption failed" in text, text[-4000:]
    assert "training_job_gate: promoted" not in text
    assert not (tmp_path / "release-2.json").exists() and production.read_text() == kept
    assert KEY not in text and VAULT_PASSWORD not in text

    # The vault opens, but holds another key than the one production was promoted with: the gate closes naming the
    # file, and production is unchanged.
    other = "rk57-other-%s" % uuid.uuid4().hex
    vaulted.vault_key(other)
    result, text = vaulted.play(gate_deploy_promote(emulator, ids["better"], production, tmp_path / "release-3.json"))
    assert result.returncode != 0, text[-4000:]
    assert "hmac_sha256 does not verify with record_key" in text and str(production) in text, text[-4000:]
    assert "training_job_gate: promoted" not in text
    assert not (tmp_path / "release-3.json").exists() and production.read_text() == kept
    assert KEY not in text and other not in text and VAULT_PASSWORD not in text


# -- 2. AK/SK from HUAWEICLOUD_* beside task options ----------------------------------------------------------------


def promoted_record(emulator, run_playbook, tmp_path, job_id):
    """A production record as the role promotes one (gate, promote), with the key; its path."""
    production = tmp_path / "production.json"
    role_vars = {
        "training_job_gate_ids": [job_id],
        "training_job_gate_metrics": GATE,
        "training_job_gate_production": str(production),
        "training_job_gate_baseline": {"record": str(production), "required": False},
        "training_job_gate_record_key": "{{ record_key }}",
        "training_job_gate_poll": 0.2,
    }
    promote_vars = {"training_job_gate_production": str(production), "training_job_gate_record_key": "{{ record_key }}"}
    tasks = [
        {"ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars},
        {"ansible.builtin.include_role": {"name": ROLE, "tasks_from": "promote"}, "vars": promote_vars},
    ]
    result = run_playbook(play(emulator, tasks, {"record_key": KEY}))
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return str(production)


def endpoint_only_play(emulator, tasks):
    """A play whose module_defaults give where to call (endpoint, project) and no credentials."""
    built = play(emulator, tasks)
    defaults = built[0]["module_defaults"]["group/modelarts.training.modelarts"]
    del defaults["access_key"], defaults["secret_key"]
    return built


@WAYS
def test_aksk_from_the_environment_beside_endpoint_options_and_a_wrong_secret_key_option_wins(emulator, run_playbook, tmp_path, in_process):
    ids = churn(emulator, "churn-env-aksk", prod=0.86, worse=0.84, better=0.9)
    production = promoted_record(emulator, run_playbook, tmp_path, ids["prod"])
    baseline = {"record": production, "record_key": KEY}
    env = dict((name, value) for name, value in emulator.env("aksk").items() if name in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK"))
    assert env["HUAWEICLOUD_SDK_SK"] == emulator.sk
    tasks = [
        info("worse, AK/SK from the environment", "worse", training_job_id=ids["worse"], wait=True, metrics=GATE, baseline=baseline),
        info("better, AK/SK from the environment", "better", training_job_id=ids["better"], wait=True, metrics=GATE, baseline=baseline),
        info(
            "better, a wrong secret_key option over the environment's",
            "wrong",
            training_job_id=ids["better"],
            wait=True,
            metrics=GATE,
            baseline=baseline,
            secret_key=WRONG_SECRET,
        ),
        save(tmp_path, "worse", "better", "wrong"),
    ]
    results, text = run(run_playbook, tmp_path, endpoint_only_play(emulator, tasks), in_process, env=env, verbosity=4)

    worse = results["worse"]
    assert worse["failed"] and worse["baseline_job"]["id"] == ids["prod"], worse.get("msg")
    assert "val_accuracy is 0.84, improving on the baseline's 0.86 by -0.02" in "\n".join(worse["job_messages"])
    better = results["better"]
    assert not better["failed"] and better["training_job"]["metrics_ok"] is True, better.get("msg")
    assert better["training_job"]["metrics"]["val_accuracy"]["baseline_value"] == 0.86 and better["baseline_job"]["id"] == ids["prod"]

    # The option wins over HUAWEICLOUD_SDK_SK: the service refuses the signature, and nothing says the gate opened.
    wrong = results["wrong"]
    assert wrong["failed"], wrong
    assert "HTTP 401" in wrong["msg"] and "Incorrect IAM authentication information" in wrong["msg"], wrong["msg"]
    job = wrong.get("training_job") or {}
    assert job.get("metrics_ok") is not True and wrong.get("baseline_job") is None, wrong
    for secret in (emulator.sk, WRONG_SECRET, KEY):
        assert secret not in text and secret not in json.dumps(results)
