# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test event filter (``--filter-dir``): ansible-rulebook never acknowledges the event of one transition.

ansible-rulebook 1.3 puts an event on a source's feedback queue once its rules engine took it, looking the queue up by
the event's ``meta.source.name``; its own ``insert_meta_info`` filter runs after this one and keeps a name already set.
For the event of the job ``$WITHHOLD_ACK_JOB`` reaching ``$WITHHOLD_ACK_PHASE``, this filter sets another name: the
rules still receive the event, and no acknowledgement ever reaches the source.  Without the variables it changes
nothing.
"""

import os


def main(event, **_kwargs):
    body = event.get("modelarts") if isinstance(event, dict) else None
    job = os.environ.get("WITHHOLD_ACK_JOB")
    if job and isinstance(body, dict) and body.get("training_job", {}).get("id") == job and body.get("phase") == os.environ.get("WITHHOLD_ACK_PHASE"):
        event.setdefault("meta", {}).setdefault("source", {})["name"] = "acknowledgement withheld"
    return event
