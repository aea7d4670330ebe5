"""Sphinx configuration of the course website (`make site`; scripts/build_site.py).

The sources Sphinx reads are not here: scripts/build_site.py lays out a staging folder with
the executed notebooks (the reference GPU's where one is recorded) and a generated index, and
runs Sphinx on it with this folder as the configuration directory. Nothing is executed and
nothing is fetched: the build and the site both work with no network.
"""

project = "Tensor Layout Lab"
author = "Tensor Layout Lab"
copyright = "Tensor Layout Lab contributors"  # noqa: A001 -- Sphinx's own setting name

extensions = ["myst_nb"]

# The notebooks carry the outputs of a real run; the site shows them as they are.
nb_execution_mode = "off"
# A widget's saved output holds its view (live only with a kernel) and, beside it, the static
# picture labkit draws (image/svg+xml). Dropping the view from the priority list makes every
# widget show its picture; no widget JavaScript (which myst-nb would take from a CDN) is loaded.
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/javascript", None),
]
nb_ipywidgets_js = {}
# stderr (warnings a run printed) is part of what the learner saw; keep it, quietly.
nb_output_stderr = "show"
nb_merge_streams = True

# No math in the chapters: no MathJax either (it would come from a CDN). A chapter that adds
# math fails tests/site (an external script) until math is rendered at build time.
myst_enable_extensions = []
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # chapters number their own headings ("## 1. ...")

source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
root_doc = "index"

html_theme = "sphinx_book_theme"
html_title = "Tensor Layout Lab"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    # Offline: no repository or launch buttons that the theme builds from a repository URL
    # (each chapter page has its own launch links), no analytics, no external icons.
    "use_download_button": False,
    "use_fullscreen_button": True,
    "use_repository_button": False,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
