# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Talking to the service: the connection's settings, the HTTP transport and its watchdog (deadlines, TLS, body
limits), where calls go (endpoints), request signing, IAM, credentials and the sources that obtain them, the API
client, the search API and bounded fan-out.  Nothing here knows what a job document means.

May import: ground.
"""
