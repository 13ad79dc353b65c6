# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test your own playbook against the ModelArts emulator, with nothing but its pytest fixture.

    pip install "modelarts-emulator[tls]" pytest ansible-core   # and: ansible-galaxy collection install modelarts.training
    pytest test_deploy.py

``modelarts_emulator`` is a running HTTPS emulator (reset before each test) with the demo jobs;
``env()`` gives the HUAWEICLOUD_* variables that point ansible-playbook at it.
"""

import json
import os
import pathlib
import subprocess

PLAYBOOK = pathlib.Path(__file__).with_name("deploy.yml")


def deploy(emulator, job_id, release_file):
    """Run the playbook against the emulator; return the completed process."""
    env = dict(os.environ, **emulator.env())
    extra_vars = {"training_job_id": job_id, "release_file": str(release_file)}
    return subprocess.run(
        ["ansible-playbook", "-i", "localhost,", "-c", "local", str(PLAYBOOK), "-e", json.dumps(extra_vars)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_deploys_once_the_job_completes(modelarts_emulator, tmp_path):
    # Each poll of the job moves it one step: the playbook waits through Creating and Running.
    job_id = modelarts_emulator.add_job(name="resnet50-train", timeline=["Creating", {"phase": "Running", "polls": 2}, "Completed"])
    release = tmp_path / "release.json"
    result = deploy(modelarts_emulator, job_id, release)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(release.read_text()) == {"job": "resnet50-train", "phase": "Completed", "model": "obs://ml-team-bucket/output/resnet50-train/"}
    polls = modelarts_emulator.requests(path="/training-jobs/" + job_id)
    assert [entry["status"] for entry in polls] == [200, 200, 200, 200]


def test_does_not_deploy_a_failed_job(modelarts_emulator, tmp_path):
    job_id = modelarts_emulator.add_job(name="bert-train", timeline=["Running", "Failed"], failure={"exit_code": 137, "message": "OOMKilled"})
    release = tmp_path / "release.json"
    result = deploy(modelarts_emulator, job_id, release)
    assert result.returncode == 2
    assert "reached phase Failed" in result.stdout and "OOMKilled" in result.stdout
    assert not release.exists()


def test_rides_out_throttling(modelarts_emulator, tmp_path):
    # A demo job that already completed, behind two throttled answers (429 with Retry-After).
    modelarts_emulator.add_fault(type="throttle", count=2, retry_after=1)
    release = tmp_path / "release.json"
    result = deploy(modelarts_emulator, "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81", release)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(release.read_text())["job"] == "resnet50-flowers-train-baseline"
    assert [entry["status"] for entry in modelarts_emulator.requests(path="/training-jobs/")] == [429, 429, 200]
