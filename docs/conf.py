"""Sphinx configuration of kane's documentation site (MyST markdown, furo theme, autodoc of the public API)."""

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent / "src"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

project = "kane"
author = "the kane developers"
copyright = "2026, the kane developers"
try:
    from kane import __version__ as release
except ImportError:  # pragma: no cover - the build names the problem
    release = "unknown"
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "kane_cli",
    "kane_docstrings",
    "kane_figures",
    "model_reference",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
smartquotes_action = "qe"  # quotes and ellipses only: option names such as --live keep their two hyphens

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
toc_object_entries = False  # API objects stay out of the navigation, which is copied into every page
autodoc_typehints = "description"
autodoc_typehints_format = "short"
napoleon_google_docstring = True
napoleon_numpy_docstring = True

html_theme = "furo"
html_title = f"kane {release}"
html_static_path = []
html_show_sourcelink = False
