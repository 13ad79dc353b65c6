# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make demo`, the README's first command, works: the gate opens on Completed jobs and stays shut on a Failed one."""

import os
import subprocess
import sys

from conftest import ROOT


def test_demo_opens_then_closes_the_gate(collection_root, ansible_env):
    staged = os.path.join(collection_root, "ansible_collections", "modelarts", "training")
    result = subprocess.run(
        [sys.executable, os.path.join(staged, "hacking", "demo.py")], env=ansible_env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "The gate opened and the deploy step wrote" in output
    assert '"model_path": "obs://ml-team-bucket/output/resnet50-flowers-train/"' in output
    assert "Creating -> Pending -> Running -> Completed" in output
    assert "bert-intent-train) reached phase Failed" in output and "OOMKilled" in output
    assert "The gate stayed closed" in output
    # The closed gate's message quotes the failed job's diagnostics: its last error event and its log's last lines.
    assert "last error event at " in output and "Failed to run the training job." in output
    assert "torch.cuda.OutOfMemoryError: CUDA out of memory." in output
    assert "last 5 log lines of task worker-0:" in output and "[ModelArts Service Log]Training end with return code: 137" in output
    assert "Releases written: release-demo-1.json" in output
