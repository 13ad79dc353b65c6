# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The examples ``ansible-doc`` shows run (issue 38, item 9): each plugin's EXAMPLES, as ``ansible-doc --json``
prints them, is run with ``ansible-playbook`` against an emulator serving the shipped ``demo`` scenario, the
credentials and endpoints exported as a user would (``HUAWEICLOUD_*``), so every id and name they use must be
one the scenario serves. The plugins are every one the tree holds (``conftest.collection_plugins``): a new plugin's
examples run by its being added. The role's documentation (its argument spec) has no examples."""

import json
import os
import re
import subprocess

import pytest
import yaml

from conftest import BIN, collection_plugins

# Every plugin of the tree (conftest.collection_plugins); the role's documentation (its argument spec) has no examples.
PLUGINS = [(kind, name) for kind, name in collection_plugins() if kind != "role"]
# The variables the examples name without defining them, as the pages around them say.
DEMO_JOB = "6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from modelarts_emulator.launcher import running_emulator  # pylint: disable=import-outside-toplevel

    with running_emulator(scenario="demo", tls=True) as emu:
        yield emu


def examples(ansible_env, kind, name):
    process = subprocess.run(
        [os.path.join(BIN, "ansible-doc"), "-t", kind, "--json", name], env=ansible_env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(process.stdout)[name]["examples"]


@pytest.mark.parametrize("kind,name", PLUGINS, ids=[name.rpartition(".")[2] for _kind, name in PLUGINS])
def test_the_examples_of_ansible_doc_run_against_the_demo_scenario(demo, ansible_env, tmp_path, kind, name):
    tasks = yaml.safe_load(examples(ansible_env, kind, name))
    assert tasks, "%s has examples" % name
    playbook = tmp_path / "examples.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}], sort_keys=False))
    variables = {"job_id": DEMO_JOB, "vault_huaweicloud_ak": demo.ak, "vault_huaweicloud_sk": demo.sk}
    env = dict(ansible_env, **demo.env())
    # -v: each task's result is printed, so a search that found nothing shows as "training_jobs": [].
    command = [os.path.join(BIN, "ansible-playbook"), "-v", "-i", "localhost,", "-c", "local", str(playbook), "-e", json.dumps(variables)]
    result = subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-4000:]
    # Every search found a job, every read answered: nothing an example names is missing from the scenario.
    assert '"training_jobs": []' not in text and "not found" not in text.lower(), text[-4000:]
    assert re.search(r"failed=0 ", text), text[-4000:]
    assert "[WARNING]" not in text, text[-4000:]
