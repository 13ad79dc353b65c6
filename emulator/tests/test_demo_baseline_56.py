# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The demo's model in production is older than its candidates (issue 56): a baseline search gives each candidate the
newest job created before it, so the production job must have been created first for the metrics gate to compare with it."""

from modelarts_emulator.scenario import load_file, resolve_scenario_path
from modelarts_emulator.state import EmulatorState

BASELINE = "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81"  # resnet50-flowers-train-baseline, tagged stage=production
CANDIDATES = ("5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d51", "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d52")  # resnet50-flowers-v2, -v3


def test_the_demo_production_job_was_created_before_its_candidates():
    state = EmulatorState(load_file(resolve_scenario_path("demo")))
    project = state.directory.first_project()["id"]
    production = state.v2_job(project, BASELINE).lifecycle.created_ms
    assert all(production < state.v2_job(project, job_id).lifecycle.created_ms for job_id in CANDIDATES)
