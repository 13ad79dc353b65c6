# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job is: the phase vocabulary, the v2 and v1 document schemas and their validation, how a document becomes
the item a caller sees (identity check, normalisation), and which jobs a call is about (selection: ids, names,
tags, searches).

May import: ground, service.
"""
