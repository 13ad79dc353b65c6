#!/usr/bin/python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: modelarts_training_job_info
short_description: Get Huawei Cloud ModelArts training jobs, validated and normalised, and optionally wait for them
version_added: 1.0.0
description:
  - Returns the details of ModelArts training jobs from the v2 API (C(GET /v2/{project_id}/training-jobs/{id})) or of a
    legacy v1 job version (C(GET /v1/{project_id}/training-jobs/{job_id}/versions/{version_id})).
  - Every response is checked against a JSON schema (see O(validate)) and normalised into the same item shape for v2 and
    v1, so a playbook can trust C(phase), C(completed) and C(failure_reason).
  - With O(wait=true) it polls until every job is in a O(wait_for) phase, failing at once when any job reaches a O(fail_on)
    phase, or when the single deadline O(wait_timeout) passes.
  - Many jobs are fetched concurrently over one HTTP session; while waiting, the phases of two or more v2 jobs are
    polled through the search API (C(POST /v2/{project_id}/training-job-searches)), one request per 10 jobs.
  - For a v2 job in a O(fail_on) phase it also reads why the job failed - the job's error events and the last O(log_lines)
    lines of each task's log - into the item's C(diagnostics), and the failure message quotes the last error event and the
    last lines of the failing task's log (see O(diagnostics)). A completed job costs no extra call.
  - With O(metrics) it also reads what each C(Completed) job produced - a v1 job's C(model_metric_list), a v2 task's log
    scanned with a regular expression, a fine-tuning job's ft-metrics series - and checks the bounds it must meet, absolute
    or against the O(baseline) (the model in production); with O(wait) a job that breaks one fails the task (fail closed).
  - This module never changes anything in the cloud.
  - "Legacy v1 integer statuses are mapped onto v2 phases as follows (C(status_code) keeps the integer):"
  - C(0) UNKNOWN -> C(Abnormal), the service lost track of the job; never success.
  - C(1) INIT, C(2) IMAGE_CREATING, C(4) SUBMIT_TRYING, C(18) CHECK_INIT, C(19) CHECK_RUNNING -> C(Creating).
  - C(3) IMAGE_FAILED, C(5) SUBMIT_FAILED, C(11) FAILED, C(16) SUBMIT_MODEL_FAILED, C(17) DEPLOY_SERVICE_FAILED,
    C(21) CHECK_FAILED, C(22) MOUNT_FAILED -> C(Failed).
  - C(6) DELETE_FAILED, C(14) LOST -> C(Abnormal).
  - C(7) WAITING, C(20) CHECK_RUNNING_COMPLETED -> C(Pending) (a finished pre-run check is not a finished training).
  - C(8) RUNNING, C(15) SCALING -> C(Running).
  - C(9) KILLING -> C(Terminating).
  - C(10) COMPLETED -> C(Completed), the only v1 status that counts as success.
  - C(12) KILLED, C(13) CANCELED -> C(Terminated).
  - A v1 status outside 0-22 gives a null C(phase) and a schema error; it never counts as completed.
author:
  - modelarts.training contributors (@modelarts-training)
options:
  training_job_id:
    description:
      - ID of one v2 training job, a UUID (never the job's name, which O(name) selects by).
      - Exactly one of O(training_job_id), O(training_job_ids), O(name) and/or O(tags), or O(job_id) with O(version_id) is
        required; only O(training_job_ids) and O(v1_jobs), and O(name) and O(tags), may be combined.
    type: str
  training_job_ids:
    description:
      - IDs of several v2 training jobs, fetched and polled concurrently. Duplicates are queried once.
    type: list
    elements: str
  name:
    description:
      - Name of v2 training jobs, matched exactly (the list API is searched page by page).
      - Every job that ever had the name is selected, a failed run of last week included; O(latest) keeps the newest.
      - The search only chooses the jobs (with O(tags) and O(latest) too) - each job it selects is read by its own GET before
        it is returned, with or without O(wait), so an item's phase is never the word of a search index that may lag
        behind the job.
      - Returns an empty C(training_jobs) list when no job has this name.
    type: str
  job_id:
    description:
      - ID of a legacy v1 training job; needs O(version_id).
    type: int
  version_id:
    description:
      - ID of the version of the legacy v1 training job O(job_id).
    type: int
  v1_jobs:
    description:
      - Several legacy v1 job versions, fetched and polled concurrently.
      - May be combined with O(training_job_ids) to wait on v2 and v1 jobs in one task.
    type: list
    elements: dict
    suboptions:
      job_id:
        description: ID of the v1 training job.
        type: int
        required: true
      version_id:
        description: ID of its version.
        type: int
        required: true
extends_documentation_fragment:
  - modelarts.training.connection
  - modelarts.training.wait
  - modelarts.training.query
  - modelarts.training.search
  - modelarts.training.metrics
  - modelarts.training.stall
attributes:
  check_mode:
    description: Can run in check mode and return the changed status prediction without modifying the target.
    support: full
    details:
      - The module only reads, so check mode runs it in full, waiting included, and the result is the real one.
        To skip the wait in a dry run, set O(wait) to V("{{ not ansible_check_mode }}").
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
    support: none
  action_group:
    description: Use C(group/modelarts.training.modelarts) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - modelarts.training.modelarts
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
seealso:
  - plugin: modelarts.training.training_job
    plugin_type: lookup
  - module: ansible.builtin.uri
    description: What this module replaces - hand-signed requests in an C(until) loop.
notes:
  - On a O(fail_on) phase, a timeout, or an error, the task fails; C(msg) names each job that is not done (id, name,
    phase and failure reason, or the last phase seen and the time waited), and C(training_jobs) still holds every job's
    last state.
  - A missing job (HTTP 404, or HTTP 400 with C(ModelArts.2775)) fails the task with the id, the error code and the request id.
"""

EXAMPLES = r"""
# The ids and names are the emulator's demo jobs (modelarts-emulator without --scenario): each example runs against it.
- name: Get one training job
  modelarts.training.modelarts_training_job_info:
    region: cn-north-4
    training_job_id: 6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60
  register: job

- name: Wait until two jobs are Completed, failing fast on Failed, Abnormal or Terminated
  modelarts.training.modelarts_training_job_info:
    training_job_ids:
      - 6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60
      - 9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81
    wait: true
    wait_timeout: 7200
  register: jobs

- name: Set connection options once for every module of the collection
  module_defaults:
    group/modelarts.training.modelarts:
      region: cn-north-4
      access_key: "{{ vault_huaweicloud_ak }}"
      secret_key: "{{ vault_huaweicloud_sk }}"
  block:
    - name: Find the jobs called resnet-nightly
      modelarts.training.modelarts_training_job_info:
        name: resnet-nightly
      register: nightly

    - name: Show their phases
      ansible.builtin.debug:
        msg: "{{ nightly.training_jobs | map(attribute='phase') }}"

- name: Gate on last night's run of a name reused every night, not on an older failed one
  modelarts.training.modelarts_training_job_info:
    name: resnet-nightly
    latest: true
    wait: true

- name: The jobs of a release, by tags (any of two values of one key, and a key with any value)
  modelarts.training.modelarts_training_job_info:
    tags:
      release: ["2.4.0", "2.4.1"]
      approved: null

- name: A job in a workspace other than the default one
  modelarts.training.modelarts_training_job_info:
    name: finetune-llm
    workspace_id: 0f1e2d3c4b5a69788796a5b4c3d2e1f0

- name: A legacy v1 job version
  modelarts.training.modelarts_training_job_info:
    job_id: 10
    version_id: 12
  register: legacy

- name: Accept responses that drifted from the documented schema, with warnings
  modelarts.training.modelarts_training_job_info:
    training_job_id: 6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60
    validate: warn

- name: Gate on what a job produced - val_accuracy from its log at least 0.9 and better than the model in production
  modelarts.training.modelarts_training_job_info:
    training_job_id: 5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d52
    wait: true
    metrics:
      - name: val_accuracy
        regex: "val_accuracy=([0-9.]+)"
        min: 0.9
        min_improvement: 0.01
    baseline:
      tags:
        stage: production
  register: candidate

- name: Show how the candidate compares
  ansible.builtin.debug:
    msg: >-
      {{ candidate.training_job.metrics.val_accuracy.value }} against
      {{ candidate.training_job.metrics.val_accuracy.baseline_value }} of {{ candidate.baseline_job.name }}

- name: The loss of a fine-tuning job, from its ft-metrics series (a report, without wait)
  modelarts.training.modelarts_training_job_info:
    name: finetune-llm
    workspace_id: 0f1e2d3c4b5a69788796a5b4c3d2e1f0
    latest: true
    metrics:
      - name: eval_loss
        group: validation
        goal: min
        max: 1.2

- name: The accuracy of a legacy v1 job, from its model_metric_list
  modelarts.training.modelarts_training_job_info:
    job_id: 11
    version_id: 3
    metrics:
      - name: accuracy
        min: 0.85

- name: Keep a CI log short - only the paths the play reads stay under details
  modelarts.training.modelarts_training_job_info:
    training_job_id: 6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60
    wait: true
    details_paths: []
"""

RETURN = r"""
training_jobs:
  description:
    - One item per job, in the order asked (for O(name), newest first). Empty when O(name) matches nothing.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: The v2 C(metadata.id), or the v1 C(job_id).
      type: raw
      returned: always
      sample: 3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718
    name:
      description: The v2 C(metadata.name), or the v1 C(job_name).
      type: str
      returned: always
      sample: nightly-resnet50
    version_id:
      description: The v1 version id.
      type: int
      returned: for v1 jobs
      sample: 2
    api_version:
      description: Which API the item comes from.
      type: str
      returned: always
      sample: v2
    phase:
      description:
        - One of C(Creating), C(Pending), C(Running), C(Failed), C(Completed), C(Terminating), C(Terminated), C(Abnormal).
        - Null when the response holds no readable phase (then C(schema_errors) says why).
      type: str
      returned: always
      sample: Completed
    status_code:
      description: The v1 integer status the phase was mapped from.
      type: int
      returned: for v1 jobs
      sample: 10
    secondary_phase:
      description: The v2 C(status.secondary_phase), or the name of the v1 status (such as C(COMPLETED)); informational only.
      type: str
      returned: always
      sample: Completed
    terminal:
      description: Whether the phase is final (C(Completed), C(Failed), C(Terminated) or C(Abnormal)).
      type: bool
      returned: always
      sample: true
    completed:
      description: Whether the phase is C(Completed).
      type: bool
      returned: always
      sample: true
    failed:
      description: Whether the phase is in O(fail_on).
      type: bool
      returned: always
      sample: false
    create_time:
      description: Creation time, ISO 8601 UTC (the API gives epoch milliseconds).
      type: str
      returned: always
      sample: "2024-05-01T12:34:56Z"
    start_time:
      description: Start time, ISO 8601 UTC, or null before the job started.
      type: str
      returned: always
      sample: "2024-05-01T12:40:00Z"
    duration_seconds:
      description: Run time in seconds, or null.
      type: float
      returned: always
      sample: 3600.5
    failure_reason:
      description:
        - For jobs in a O(fail_on) phase, C(Failed) or C(Abnormal), the most specific reason the response holds (a task's
          exit code and message, a running record's end reason, the secondary phase); otherwise null.
      type: str
      returned: always
      sample: "task worker-0 exited with code 137: OOMKilled"
    details:
      description:
        - The API document as returned. For v1, C(model_metric_list) is additionally parsed into C(metrics).
        - Access tokens under C(endpoints) are masked as C(********) unless O(include_endpoint_tokens=true).
      type: dict
      returned: always
      sample: {"kind": "job", "metadata": {"id": "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718", "name": "nightly-resnet50"},
               "status": {"phase": "Completed", "secondary_phase": "Completed", "duration": 3600500}}
    schema_errors:
      description: Where the response breaks its JSON schema, as C(path) (a JSON path such as C($.status.phase)) and C(message).
      type: list
      elements: dict
      returned: always
      sample: []
    waited_seconds:
      description: Seconds from the start of the task to this job's last observation, rounded to milliseconds.
      type: float
      returned: when O(wait=true)
      sample: 125.2
    polls:
      description: How many times this job was requested.
      type: int
      returned: when O(wait=true)
      sample: 9
    phase_history:
      description: The phase changes seen, the first observation included, each with its ISO 8601 UTC time C(at).
      type: list
      elements: dict
      returned: when O(wait=true)
      sample: [{"phase": "Running", "at": "2024-05-01T12:40:03Z"}, {"phase": "Completed", "at": "2024-05-01T13:40:10Z"}]
    diagnostics:
      description:
        - What the service says about the failure of a v2 job in a O(fail_on) phase (with or without O(wait)); null for
          other jobs, for v1 jobs and with O(diagnostics=false). Reading it never changes the job's verdict.
        - The failed task's message (and C(job_messages)) adds the last error event and the last lines of the failing task's
          log. Secrets the collection knows (credentials, endpoint tokens) are masked and control characters escaped in all
          of it.
      type: dict
      returned: always
      contains:
        events:
          description: The job's C(Error) events (C(Warning) ones where the service sends them, never C(Info)), newest last.
          type: list
          elements: dict
          sample: [{"time": "2024-05-01T13:40:09Z", "level": "Error", "message": "[worker-0] Training process exited with code 137"}]
        tasks:
          description:
            - One entry per task (the failing one first), C(task_id), C(log_tail) (the last O(log_lines) lines of its log,
              each cut to 1000 characters) and C(log_truncated) (whether earlier lines, or the end of a long line, were left out).
          type: list
          elements: dict
          sample: [{"task_id": "worker-0", "log_tail": ["run_train.sh: line 12:    87 Killed    python train.py",
                                                        "[ModelArts Service Log]Training end with return code: 137"], "log_truncated": true}]
        errors:
          description:
            - What could not be read, one line each (HTTP 403 for a missing IAM permission such as
              C(modelarts:trainJob:getLogs), a timeout, a log not ready yet).
          type: list
          elements: str
          sample:
            - "log of task worker-0 (preview): HTTP 403 ModelArts.2771: No permission (the credentials need the IAM permission modelarts:trainJob:getLogs)"
    metrics:
      description:
        - What the job produced, one entry per O(metrics) name - null unless the job is C(Completed).
        - C(value) (a float, or null when it could not be read), C(source) (the source read - V(v1), V(log) or V(ft_metrics)),
          C(ok) (V(true) or V(false), null for an entry with no bound), C(problems) (one line each - a bound broken, or why no
          value could be read - the source tried, the API error, no match in the lines scanned, not a number, NaN or infinite),
          C(baseline_value) and C(improvement) (the value's lead over the baseline's in the direction of O(metrics[].goal)).
      type: dict
      returned: when O(metrics) is given
      sample: {"val_accuracy": {"value": 0.91, "source": "log", "ok": true, "problems": [], "baseline_value": 0.88, "improvement": 0.03}}
    metrics_ok:
      description:
        - V(false) when any bound fails or a bounded value could not be read (fail closed), V(true) when all hold, null when
          no entry has a bound or the job is not C(Completed).
      type: bool
      returned: when O(metrics) is given
      sample: true
    progress:
      description:
        - Whether a C(Running) job still makes progress (O(stall)) - null for other phases and when O(stall) is unset.
        - C(stalled) (V(true) when the signals asked for hold, see O(stall.require)), C(since) (when the stall began, ISO 8601
          UTC, or null), C(signals) - C(idle) (C(held), C(minutes), C(tasks) - per task C(metric), C(last) and C(peak) over
          the window), C(quiet) (C(held), C(since) - the last log growth seen) and C(service) (C(held), C(hangs), C(last)),
          each null when not asked for - and C(problems) (one line per signal that could not be read - never a stall).
      type: dict
      returned: always
      version_added: 1.1.0
      sample: {"stalled": true, "since": "2026-11-25T02:00:00Z",
               "signals": {"idle": {"held": true, "minutes": 30, "tasks": {"worker-0": {"metric": "gpuUtil", "last": 0.1, "peak": 0.3}}},
                           "quiet": {"held": true, "since": "2026-11-25T02:00:03Z"}, "service": {"held": false, "hangs": 0, "last": null}},
               "problems": []}
    error:
      description: Why a job could not be read at all (then most other keys are null).
      type: str
      returned: when the job could not be fetched
      sample: "get training job 3f7a: HTTP 400 ModelArts.2775: Training job not found. [request id 5d1c]"
training_job:
  description:
    - The single item, when one job was asked for with O(training_job_id) or O(job_id) and O(version_id), or with
      O(latest) when a job matched.
    - Also returned when the task fails (a O(fail_on) phase, a timeout, an error), holding the job's last state or its C(error).
  returned: when one job was asked for
  type: dict
  sample: {"id": "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718", "name": "nightly-resnet50", "api_version": "v2", "phase": "Completed",
           "completed": true, "terminal": true, "failed": false}
baseline_job:
  description:
    - The O(baseline) job's item, with its C(metrics) (read as the candidates' are, without bounds), or null when no
      O(baseline) is given or no such job was found.
  returned: when O(metrics) is given
  type: dict
  sample: {"id": "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81", "name": "resnet50-flowers-train-baseline", "phase": "Completed",
           "metrics": {"val_accuracy": {"value": 0.88, "source": "log", "ok": null, "problems": [], "baseline_value": null, "improvement": null}}}
job_messages:
  description:
    - When the task failed, one line per job that is not done - id and name, phase, and the failure reason, or the last
      phase seen and the time waited, or the error - and one line per bound a C(Completed) job broke (with O(metrics)).
  returned: on failure
  type: list
  elements: str
  sample: ["3f7a1c2e (nightly-resnet50) reached Failed: task worker-0 exited with code 137: OOMKilled; last error event at
            2024-05-01T13:40:09Z: Failed to run the training job.; last 2 log lines of task worker-0: run_train.sh: line 12:
            87 Killed    python train.py | [ModelArts Service Log]Training end with return code: 137"]
schema_errors:
  description:
    - When the task failed because a response broke the JSON schema under O(validate=strict), that response's errors
      as C(path) and C(message) (each item also carries its own C(schema_errors)).
  returned: when the task failed on a schema error
  type: list
  elements: dict
  sample: [{"path": "$.status.phase", "message": "'Done' is not one of ['Creating', ...]"}]
error_code:
  description: The service's error code when the task failed on an API error.
  returned: on an API error
  type: str
  sample: ModelArts.2775
request_id:
  description: The C(X-Request-Id) of the failed request, to quote to Huawei Cloud support.
  returned: on an API error
  type: str
  sample: 5d1c7b9e2f3a4b6c8d0e1f2a3b4c5d6e
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.modelarts.training.plugins.module_utils.door import job_info
from ansible_collections.modelarts.training.plugins.module_utils.door.query import MissingLibraryError


class _Module(AnsibleModule):
    """``AnsibleModule`` whose message on an unknown option names the closest option (``job_info.unsupported_message``)."""

    def fail_json(self, msg, **kwargs):  # pylint: disable=arguments-differ
        if isinstance(msg, str) and msg.startswith("Unsupported parameters for"):
            msg = job_info.unsupported_message(msg, getattr(self, "params", None) or {})
        super(_Module, self).fail_json(msg=msg, **kwargs)


def main():
    # The argument spec, its rules and the result are job_info's: the action plugin of the same name runs the same
    # task in the controller's process when the connection is local (plugins/action/modelarts_training_job_info.py).
    module = _Module(supports_check_mode=True, **job_info.spec_keywords())
    try:
        outcome = job_info.run(module.params)
    except MissingLibraryError as error:
        module.fail_json(msg=missing_required_lib(error.library) + str(error).partition("required")[2], exception=error.traceback)
    module.no_log_values.update(outcome.secrets)
    for warning in outcome.warnings:
        module.warn(warning)
    if outcome.failed:
        module.fail_json(msg=outcome.msg, **outcome.result)
    module.exit_json(**outcome.result)


if __name__ == "__main__":
    main()
