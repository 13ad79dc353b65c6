# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sphinx configuration of the rendered docsite (`make docs`): plugin reference plus the Markdown guides.

Built offline: no intersphinx inventories are fetched.
"""

project = "modelarts.training"
copyright = "2026, modelarts.training contributors"  # pylint: disable=redefined-builtin
title = "modelarts.training"
html_short_title = "modelarts.training"
extensions = ["sphinx_antsibull_ext", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3
pygments_style = "ansible"
highlight_language = "YAML+Jinja"
html_theme = "sphinx_ansible_theme"
html_show_sphinx = False
display_version = False
html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False
html_theme_options = {
    "collapse_navigation": False,
    "analytics_id": "",
    "style_nav_header_background": "#5bbdbf",
    "style_external_links": True,
    "vcs_pageview_mode": "",
}
default_role = "any"
nitpicky = False
suppress_warnings = ["myst.xref_missing"]
