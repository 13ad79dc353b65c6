# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait options (waiting/wait_options.py: WAIT_OPTIONS), in a module flavour and a plugin flavour."""

from __future__ import annotations


class ModuleDocFragment(object):
    """Use as C(modelarts.training.wait) in modules and C(modelarts.training.wait.plugins) in lookups."""

    DOCUMENTATION = r"""
options:
  wait:
    description:
      - Poll until every job is in a O(wait_for) phase, any job reaches a O(fail_on) phase, or O(wait_timeout) passes.
      - While waiting, transient errors (throttling, 5xx, timeouts) and a job not found on its first three polls (as
        right after creation) are tolerated. A service that has not answered once in the task and refuses the
        connection, has a name that does not resolve or fails TLS ends the wait with that error after the retries.
      - With two or more v2 jobs, each round learns the phases through the search API, one request per 10 jobs (or, for
        jobs selected by O(name), one search of the name while that takes fewer requests), and a job's own document is
        read (one GET) when it reaches a O(wait_for), O(fail_on) or final phase, when the search does not return it, and
        when the wait ends, so every item is as complete as with one GET per job. A wait is satisfied only once each
        job's own GET shows it in O(wait_for), never on a search's word alone. The GET of a job the search shows in a
        final O(wait_for) phase may come in a later round, so that a round costs at most its searches plus a quarter of
        them (25 calls for 200 jobs). After a round the service throttled (HTTP 429), the next interval doubles.
    type: bool
    default: false
  wait_for:
    description:
      - Phases that end the wait successfully.
      - A job in a final phase that is in neither O(wait_for) nor O(fail_on) also ends the wait with a failure, as it can
        never reach O(wait_for).
    type: list
    elements: str
    choices: [Creating, Pending, Running, Failed, Completed, Terminating, Terminated, Abnormal]
    default: [Completed]
  fail_on:
    description:
      - Phases that end the wait at once with a failure. Also sets each item's C(failed) flag.
    type: list
    elements: str
    choices: [Creating, Pending, Running, Failed, Completed, Terminating, Terminated, Abnormal]
    default: [Failed, Abnormal, Terminated]
  wait_timeout:
    description:
      - Seconds to wait; one deadline for the whole task, shared by all jobs (a name search included). V(0) looks once
        without sleeping.
      - The task ends within O(wait_timeout) plus one O(request_timeout), whatever the service does (throttling with long
        C(Retry-After), resets, slow answers, slow IAM). Only the last look, right at the deadline, may run that much longer.
    type: int
    default: 3600
  wait_sleep:
    description:
      - Seconds before the first re-poll. The interval grows by half each time up to O(wait_sleep_max).
    type: float
    default: 5
  wait_sleep_max:
    description:
      - Longest interval between two polls, in seconds.
    type: float
    default: 60
"""

    # The lookup takes the same options as keywords; its deadline is the lookup's.
    PLUGINS = r"""
options:
  wait:
    description:
      - Poll until every job is in a O(wait_for) phase; fail the lookup at once when any reaches a O(fail_on) phase.
      - With two or more v2 jobs, each round learns the phases through the search API, one request per 10 jobs; every
        item returned is still the job's own document, and the wait is satisfied only once each job's own GET shows it
        in O(wait_for).
    type: bool
    default: false
  wait_for:
    description: Phases that end the wait successfully.
    type: list
    elements: str
    choices: [Creating, Pending, Running, Failed, Completed, Terminating, Terminated, Abnormal]
    default: [Completed]
  fail_on:
    description: Phases that end the wait at once with a failure; also sets each item's C(failed) flag.
    type: list
    elements: str
    choices: [Creating, Pending, Running, Failed, Completed, Terminating, Terminated, Abnormal]
    default: [Failed, Abnormal, Terminated]
  wait_timeout:
    description:
      - Seconds to wait; one deadline for the whole lookup. It ends within O(wait_timeout) plus one O(request_timeout).
    type: int
    default: 3600
  wait_sleep:
    description: Seconds before the first re-poll; the interval grows by half each time up to O(wait_sleep_max).
    type: float
    default: 5
  wait_sleep_max:
    description: Longest interval between two polls, in seconds.
    type: float
    default: 60
"""
