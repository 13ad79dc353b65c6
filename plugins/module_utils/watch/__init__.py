# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Watching: the event source's own door and its rooms - its arguments and the watcher (source), the schedule of
polls, the lister of a watch by name or tags, the judge that turns answers into events, the stall room (a Running job
that stopped making progress: one event per stall), the ledger of what was reported, the events and the state file.
It reads jobs through the door's Query, so it stands above the door.

May import: door, ground, job, results, service, waiting.
"""
