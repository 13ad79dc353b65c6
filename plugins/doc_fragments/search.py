# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Search options (options.SEARCH_OPTIONS): tags, latest, workspace_id; in a module flavour and a plugin flavour."""

from __future__ import annotations


class ModuleDocFragment(object):
    """Use as C(modelarts.training.search) in modules and C(modelarts.training.search.plugins) in the event source (no O(latest))."""

    DOCUMENTATION = r"""
options:
  tags:
    description:
      - Select the v2 jobs carrying every given TMS tag, through the search API's C(tags).
      - "V({key: value}) matches that value; V({key: [v1, v2]}) any of them; V({key: []}), V({key: null}) or V({key: ''})
        the key with any value. Several keys must all match. With O(name), the name must match too."
      - "The search API's rules are checked before any request - at most 10 keys, at most 10 distinct values a key; keys of
        1-128 and values of 0-255 letters, digits, spaces and C(_ . : = + - @) (values also C(/)); keys without leading or
        trailing spaces; values are strings (an integer is taken as its digits; quote a number such as C(1.10))."
      - A tag search covers the jobs created in the last 31 days (the service's window); one that finds nothing says so, in a
        warning or, with O(wait), in the message.
    type: dict
  latest:
    description:
      - Only the newest job O(name) or O(tags) match, by creation time - the job of last night's run of a name reused
        every night - and not the older runs of that name.
      - Among jobs created in the same millisecond, the one with the greatest id (compared as text) is the newest, whatever
        order the service lists them in; the results of a search and the event source's listing follow the same order.
      - With O(wait), the job is chosen once, at the start, and the wait follows that job only.
      - Needs O(name) or O(tags).
    type: bool
    default: false
  workspace_id:
    description:
      - The workspace the searches look in - V(0), the default workspace, or a workspace's 32-character id. A search sees
        one workspace, so a job in another one is found only with its workspace's id here.
      - Every search of the call carries it, the bulk searches by id that poll the jobs' phases included.
    type: str
"""

    # The event source's flavour: it watches every match (no latest), each interval.
    PLUGINS = r"""
options:
  tags:
    description:
      - Watch the v2 jobs carrying every given TMS tag (with O(name), also named so), through the search API's C(tags).
      - "V({key: value}) matches that value; V({key: [v1, v2]}) any of them; V({key: []}), V({key: null}) or V({key: ''})
        the key with any value. Several keys must all match."
      - "The search API's rules are checked before any request - at most 10 keys, at most 10 distinct values a key; keys of
        1-128 and values of 0-255 letters, digits, spaces and C(_ . : = + - @) (values also C(/)); keys without leading or
        trailing spaces."
      - A tag search covers the jobs created in the last 31 days (the service's window); while it finds nothing, the source
        says so once, in a warning.
      - The jobs a listing finds are reported newest first, and jobs created in the same millisecond greatest id first - the
        job the module's O(latest) picks first.
    type: dict
  workspace_id:
    description:
      - The workspace the searches look in - V(0), the default workspace, or a workspace's 32-character id. Every search
        carries it, the searches by id that poll the jobs' phases included.
    type: str
"""
