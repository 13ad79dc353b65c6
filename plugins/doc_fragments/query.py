# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Query options shared by every plugin (options.QUERY_OPTIONS): validation, concurrency, endpoint tokens."""

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
"""
