# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job produced: metrics, a baseline, bounds (results/metric_options.py: METRIC_ENTRY_OPTIONS, BASELINE_OPTIONS; checked in door/metric_checks.py)."""

from __future__ import annotations


class ModuleDocFragment(object):
    """Use as C(modelarts.training.metrics) in modules, lookups and the event source alike."""

    DOCUMENTATION = r"""
options:
  metrics:
    description:
      - The numbers to read from each job that is C(Completed), and the bounds they must meet. C(Completed) says that a job
        ended, not that its model is fit to ship.
      - Each item gets C(metrics) (null unless the job is C(Completed)) and C(metrics_ok) (V(false) when any bound fails or a
        bounded value could not be read, V(true) when all hold, null when no entry has a bound).
      - Fail closed - a bounded metric with no value (no match in the lines scanned, not a number, NaN or infinite, an API
        error, HTTP 403, a log not ready) makes C(metrics_ok) false, with a C(problems) line naming the source tried and why.
      - With O(wait=true), a C(Completed) job whose C(metrics_ok) is false fails the task as a O(fail_on) phase does; C(msg)
        names the job, each metric, its value, the bound and the baseline's value. Without O(wait) the items only report.
        The event source has no O(wait) - an event into C(Completed) carries the item's C(metrics) and C(metrics_ok), and
        its rules decide (deploy a fit model, notify on an unfit one).
      - The metrics are read once the wait has ended (the event source - when it makes the events into C(Completed) of a
        round, the baseline's once a round), for every C(Completed) job at once (O(max_concurrency) at a time), each job's
        sources once; never for a job in another phase. They share the call's deadline - with O(wait), O(wait_timeout)
        plus one O(request_timeout); without, one O(request_timeout) - and a regular expression is matched in a child process
        that ends there, so no pattern or log can hold the task past its deadline or its C(timeout).
      - Numbers are read from the service's answers only. Text of a log is never a template; a problem line quoting it masks
        the collection's secrets as diagnostics do.
      - See the "Gate on metrics" page of the collection's docs.
    type: list
    elements: dict
    default: []
    version_added: 1.1.0
    suboptions:
      name:
        description:
          - The metric's name, as the item reports it under C(metrics) (1 to 128 characters).
          - For V(v1), the key under C(total_metric.total_metric_values) (V(accuracy), V(recall), V(precision), V(f1_score));
            for V(ft_metrics), the series' C(name_en) (V(train_loss), V(val_accuracy)).
        type: str
        required: true
      source:
        description:
          - Where the number comes from.
          - V(v1) - a v1 job's C(model_metric_list), C(total_metric.total_metric_values.<name>).
          - V(log) - a v2 task's log, scanned with O(metrics[].regex) (the AOM log by lines, newest first, 500 lines a call;
            the log preview when that call fails).
          - V(ft_metrics) - v2 C(GET /v2/{project_id}/training-jobs/{id}/ft-metrics) (fine-tuning jobs, the official SDK's
            C(ShowFtMetrics)), the series of C(data.metrics) whose C(name_en) is O(metrics[].name) (and C(group), when given). A
            series' C(data) may be a list of numbers, a list of C([x, y]) pairs or an object of parallel lists.
          - V(auto) - V(v1) for a v1 job; for a v2 job, V(log) when O(metrics[].regex) is given, else V(ft_metrics).
        type: str
        choices: [auto, v1, log, ft_metrics]
        default: auto
      regex:
        description:
          - For V(log), a Python regular expression with exactly one group, which captures the number - as an algorithm's
            C(reward_attrs[].regex) - such as V(val_accuracy[=:] *([0-9.eE+-]+)). Matched line by line (C(re.finditer)); other
            groups must be written C((?:...)).
          - A line's value is its last match; a carriage return ends a line as a newline does. Of a line over 4096 characters
            only its end is matched, as part of the line (C(^) never matches where it is cut); when the value may lie in the
            rest, the metric has no value and its problem names the
            line. A match whose capture is not a number is no value (fail closed), never skipped for an older line.
        type: str
      task:
        description:
          - For V(log), the task whose log is read, such as V(worker-0). Default the job's first task (C(status.tasks)).
        type: str
      lines:
        description:
          - For V(log), how many of the newest lines are scanned (1 to 100000), read as they arrive in bounded memory; the metrics
            of one task share one scan, which stops as soon as each has what it needs.
        type: int
        default: 1000
      pick:
        description:
          - For V(log) and V(ft_metrics), which value - V(last) (the newest), V(max) or V(min) of the values read.
        type: str
        choices: [last, max, min]
        default: last
      group:
        description:
          - For V(ft_metrics), the series' C(group), when a name is used by more than one.
        type: str
        choices: [training, validation, test]
      goal:
        description:
          - Which way is better - V(max) (an accuracy) or V(min) (a loss), as C(reward_attrs[].mode). It gives the direction of
            C(improvement).
        type: str
        choices: [max, min]
        default: max
      min:
        description:
          - The lowest value allowed (inclusive).
        type: float
      max:
        description:
          - The highest value allowed (inclusive).
        type: float
      min_improvement:
        description:
          - With O(baseline), how much the value must beat the baseline's, in the direction of O(metrics[].goal) (V(0) - at least
            as good; a negative value allows a small regression). Differences are compared to 12 significant digits.
        type: float
      min_relative_improvement:
        description:
          - With O(baseline), how much the value must beat the baseline's, as a fraction of the baseline's value (V(0.01) - 1%
            better).
        type: float
  baseline:
    description:
      - The job the candidates are compared with, such as the model in production; its metrics are read the same way, and the
        result holds its item as C(baseline_job).
      - One of O(baseline.record) (a production record - the job a gate opened on and a deployment then promoted, the model
        in production, which is not "the newest run"), O(baseline.training_job_id), O(baseline.job_id) with
        O(baseline.version_id), or a search by O(baseline.name) and/or O(baseline.tags) (with O(baseline.workspace_id)), of
        which the newest C(Completed) job that is not one of the task's jobs is taken (read by its own GET).
      - Without a baseline job (none found, or not C(Completed)), the improvement bounds fail, unless O(baseline.required=false).
    type: dict
    version_added: 1.1.0
    suboptions:
      training_job_id:
        description: A v2 job id.
        type: str
      job_id:
        description: A v1 job id, with O(baseline.version_id).
        type: int
      version_id:
        description: The version of the v1 job O(baseline.job_id).
        type: int
      name:
        description:
          - Search by name, matched exactly (as the module's O(modelarts.training.modelarts_training_job_info#module:name)).
          - With O(baseline.record), picks the record's job by name.
          - The name every run of a pipeline shares compares each candidate with the run before it, refused or not, not with the
            model in production; a search by the name of a job the call selects (without tags) is warned about once. Keep production
            in O(baseline.record) instead.
        type: str
      tags:
        description:
          - Search by TMS tags (as the module's O(modelarts.training.modelarts_training_job_info#module:tags)).
          - The service's tag search sees 31 days a request; the baseline's walks back up to O(baseline.max_age_days).
        type: dict
      workspace_id:
        description: The workspace the search looks in.
        type: str
      required:
        description:
          - When V(false) and no such job exists (a first deployment), the improvement bounds are skipped with a warning.
          - With O(baseline.record), only a record path that does not exist yet is skipped; a record that cannot be read or does
            not verify fails closed whatever O(baseline.required) says.
        type: bool
        default: true
      record:
        description:
          - A path to a production record - the decision record of the gate that opened on the deployed job, with C(promoted_at)
            (the filter P(modelarts.training.promote_record#filter), the role's C(tasks_from=promote)).
          - It must be a regular file (not a symbolic link), a JSON object whose C(sha256) verifies (and its C(hmac_sha256) with
            O(baseline.record_key)), with C(decision=open), C(promoted_at) (a decision record never promoted is not production)
            and exactly one job, or O(baseline.name) picking one of its jobs by name. A record that carries C(hmac_sha256) is
            read only with O(baseline.record_key). Anything else fails closed, naming the file and what is wrong.
          - The job is read again by its own GET (it must be C(Completed)) and its metrics again from the service; a value that
            differs from the one the record holds is a problem (the job is not what was promoted). A job is never its own
            baseline.
          - Mutually exclusive with O(baseline.training_job_id), O(baseline.job_id) and O(baseline.tags).
          - C(sha256) shows accidental damage only (anyone can compute it again after an edit); C(hmac_sha256) shows an edit by
            anyone who does not hold the key. Neither stops anyone who can write the path from putting back an earlier record
            promoted with the same key, so keep the path writable by the deployment step only.
        type: path
      record_key:
        description:
          - The secret key the production record O(baseline.record) was written with; its C(hmac_sha256) must verify with it, and
            a record without one fails closed. A record that carries C(hmac_sha256) read without this key fails closed too.
          - Never shown in a result, a message or a log.
        type: str
      max_age_days:
        description:
          - How far back, in days, a search by O(baseline.tags) walks the service's 31-day windows until it finds a job.
          - Counted from the newest candidate's creation; from 1 to 3650. Each window is one more search; a search that fails in any
            window fails closed whatever O(baseline.required) says.
        type: int
        default: 400
"""
