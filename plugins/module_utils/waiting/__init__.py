# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for jobs: the wait's options and pure judgement over an injected clock (waiter), how a wait or a watch
learns the jobs' phases (observer: a search per ten ids, or a GET per job), and whether a Running job still makes
progress (stall: the judgement; progress: the reads of each poll).  Results stands beside it: neither imports the other.

May import: ground, job, service.
"""
