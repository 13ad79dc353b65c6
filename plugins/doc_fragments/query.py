# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Query options shared by every plugin (options.QUERY_OPTIONS): validation, concurrency, endpoint tokens, diagnostics."""

from __future__ import annotations


class ModuleDocFragment(object):
    """Use as C(modelarts.training.query) in modules and lookups alike."""

    DOCUMENTATION = r"""
options:
  validate:
    description:
      - How to treat a response that does not match the API's JSON schema. Fields the API documents as optional may be
        C(null); a missing or mistyped C(metadata.id), an unknown phase, a time that is not epoch milliseconds or a missing
        C(status) break it.
      - V(strict) fails, naming each JSON path; V(warn) returns the jobs with C(schema_errors) and issues warnings;
        V(off) skips the schema (problems met while normalising are still listed in C(schema_errors)).
    type: str
    choices: [strict, warn, 'off']
    default: strict
  max_concurrency:
    description:
      - How many requests run in parallel when several jobs are asked for (1 to 256).
    type: int
    default: 16
  details_paths:
    description:
      - Keep only these dotted paths of each job's document in C(details), such as V(status.duration) or
        V(algorithm.outputs) (object keys; a path that is not in the document is skipped); V([]) leaves C(details) empty.
      - Unset, C(details) is the whole document. Ansible spends about 1 ms per KB of result on a task's output, so 200
        full-size jobs (about 12 KB each) cost more than a second that a playbook needing a few fields can save.
      - Validation, normalisation and every item key other than C(details) are unaffected.
    type: list
    elements: str
  include_endpoint_tokens:
    description:
      - The access tokens in a job's C(endpoints) (C(jupyter_lab.token), C(tensorboard.token), C(mindstudio_insight.token),
        any C(token) there) open its notebook and dashboards. They are replaced by C(********) in C(details), messages and
        warnings unless this is V(true).
      - Even when V(true) the tokens are never logged; validation always sees the document as returned.
    type: bool
    default: false
  diagnostics:
    description:
      - For every v2 job in a O(fail_on) phase, read what the service says about the failure - the job's error events and
        the last O(log_lines) lines of each task's log - into the item's C(diagnostics), and quote the last error event and
        the last lines of the failing task's log in the failure message.
      - Completed and running jobs cost no extra call. The calls run concurrently within the call's deadline (at most one
        O(request_timeout)); what cannot be read (HTTP 403 without the IAM permissions C(modelarts:trainJob:listEvents) and
        C(modelarts:trainJob:getLogs), a timeout, a log not ready yet) becomes a line of C(diagnostics.errors) and never
        changes the job's verdict.
      - V(false) makes no call at all and leaves C(diagnostics) null.
    type: bool
    default: true
  log_lines:
    description:
      - How many lines of the end of each task's log C(diagnostics) holds (0 to 10000); V(0) reads no log, only the events.
      - Up to 500 lines come from the AOM log call (a few KB); more, or when that call fails, from the log preview (the last
        5 MB of the log, cut to its last lines as it is read).
    type: int
    default: 30
"""
