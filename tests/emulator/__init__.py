# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shims that run the emulator package (emulator/) from a checkout: server.py and the deprecated launcher.py."""
