"""Sphinx extension: writes reference/model-file.md from kane's model-file declarations before the build reads it.

conf.py lists it with ``sys.path.insert(0, str(Path(__file__).parent / "_ext"))`` and ``"model_reference"`` in
``extensions``. The page is rewritten only when its text changes, so an unchanged build stays incremental.
"""

from pathlib import Path

__all__ = ["setup", "write_reference"]


def write_reference(srcdir) -> Path:
    """Write ``srcdir``/reference/model-file.md from :func:`kane.model_reference.render_reference`."""
    from kane.model_reference import render_reference

    path = Path(srcdir) / "reference" / "model-file.md"
    text = render_reference()
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path


def _builder_inited(app) -> None:
    write_reference(app.srcdir)


def setup(app):
    app.connect("builder-inited", _builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
