# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A job that stopped making progress (waiting/wait_options.py: STALL_OPTIONS; checked in door/stall_checks.py; judged in waiting/stall.py,
read in waiting/progress.py), in a module flavour and a plugin flavour."""

from __future__ import annotations


class ModuleDocFragment(object):
    """Use as C(modelarts.training.stall) in modules and C(modelarts.training.stall.plugins) in lookups."""

    DOCUMENTATION = r"""
options:
  stall:
    description:
      - Judge whether each C(Running) job still makes progress. A hung job (a collective that never returns, a dead data
        loader) stays C(Running) with its accelerators idle and its log silent; unset (the default), no stall check is made.
      - Each item gets C(progress) - null for other phases and when O(stall) is unset.
      - Three signals. Idle accelerators (O(stall.idle_minutes)) - on every task, the newest one-minute averages of
        C(gpuUtil) (or C(npuUtil)) from C(GET /v2/{project_id}/training-jobs/{id}/metrics/{task_id}) are all at or below
        O(stall.idle_below). A silent log (O(stall.quiet_minutes)) - no task's log grew across that many minutes of
        polling. The service's own hang verdict (O(stall.service)) - a C(JobHanged) event, or a recover record with
        C(fault_scenario=job_hanged), newer than the job's last start; it stalls a job on its own.
      - Evidence, never guesses - a signal that cannot be read (a CPU flavour with no accelerator metric, C(-1) samples,
        fewer averages than O(stall.idle_minutes), HTTP 403, a log not ready) is a C(problems) line of C(progress) and never
        a stall. A job inside its grace (O(stall.grace_minutes) since its last start, a restart included) never stalls.
      - With O(wait=true), a stalled job ends the wait like a O(fail_on) phase - the task fails, and C(msg) names the job
        and each signal in words (for example C(gpuUtil at most 0.4% on every task for 30 minutes; no log line for 42
        minutes of polling; the service still reports Running)). C(training_jobs) still holds every job. Without O(wait) the items only
        report.
      - Reading progress costs, per poll and only for C(Running) jobs, one request per task for each measured signal asked
        for and one events request per job (O(stall.service)), O(max_concurrency) at a time, within the call's deadline.
        The collection never stops or restarts a job; it reports.
      - See the "Hung jobs" section of the collection's module docs.
    type: dict
    version_added: 1.1.0
    suboptions:
      idle_minutes:
        description:
          - Accelerators idle for this many minutes (1 to 1440) on every task is a signal. Unset - not asked for.
        type: int
      idle_below:
        description:
          - The utilisation, in percent (0 to 100), at or below which an average counts as idle.
        type: float
        default: 1
      quiet_minutes:
        description:
          - No task's log growing across this many minutes (1 to 1440) of polling is a signal. Unset - not asked for.
          - The log's size is the AOM call's C(end_line), read with one line per task and poll.
        type: int
      service:
        description:
          - Whether the service's own hang verdict (ModelArts' C(fault-tolerance/hang-retry) detection) counts; it stalls a
            job on its own, whatever O(stall.require) says.
        type: bool
        default: true
      grace_minutes:
        description:
          - No signal counts until the job has been C(Running) this many minutes (1 to 1440) since its last start (data
            loading, compilation, a restart by the service's fault tolerance).
        type: int
        default: 10
      require:
        description:
          - Over the measured signals asked for (O(stall.idle_minutes), O(stall.quiet_minutes)) - V(all), the job stalls when
            each holds (a job preparing data on the CPU has idle accelerators but a growing log); V(any), when one does.
        type: str
        choices: [all, any]
        default: all
"""

    # The lookup takes the same option as a keyword (ansible-core does not check a lookup's suboptions: the door does).
    PLUGINS = r"""
options:
  stall:
    description:
      - Judge whether each C(Running) job still makes progress; each item gets C(progress) (null for other phases and when
        O(stall) is unset).
      - A dict with the keys C(idle_minutes) (accelerators idle on every task for this many minutes, 1 to 1440),
        C(idle_below) (percent, default 1), C(quiet_minutes) (no task's log grew across this many minutes of polling),
        C(service) (the service's own hang verdict counts, default true), C(grace_minutes) (default 10) and C(require)
        (V(all) or V(any) over the measured signals, default V(all)). Unknown keys, minutes outside 1-1440, a boolean that
        is not one, or no signal asked for are refused before any request, naming the key.
      - A signal that cannot be read (no accelerator metric, C(-1) samples, HTTP 403, a log not ready) is a C(problems) line
        of C(progress), never a stall.
      - With O(wait=true), a stalled job fails the lookup like a O(fail_on) phase; the message names the job and each
        signal in words, and says the service still reports C(Running). Without O(wait) the items only report.
    type: dict
    version_added: 1.1.0
"""
