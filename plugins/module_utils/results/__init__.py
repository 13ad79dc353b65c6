# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job produced: metrics and baselines (checked, read from v1, ft-metrics or task logs, matched in a child
process, judged fail closed), why a failed job failed (diagnostics: events and log tails), and the gate's decision
record and production record.  Waiting stands beside it: neither imports the other.

May import: ground, job, service.
"""
