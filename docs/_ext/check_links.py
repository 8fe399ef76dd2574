"""Check the internal links of a built HTML site: every relative href or src names a file that exists and every
``#anchor`` an id in it; external links (http, https, mailto, ...) are listed, not fetched.

``python docs/_ext/check_links.py out/docs`` prints the broken links and exits with status 1 when there are any.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["LinkReport", "check_site", "main"]


class _Page(HTMLParser):
    """The ids (anchors) of one page and the links (attribute, value) it makes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) is not None:
                self.links.append(attrs[key])


@dataclass(frozen=True)
class LinkReport:
    """What a check found: pages read, internal links checked, broken ones (page, link, why), external ones."""

    pages: int
    internal: int
    broken: tuple[tuple[str, str, str], ...]
    external: tuple[str, ...]


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def check_site(root: Path) -> LinkReport:
    """Check every ``*.html`` below ``root`` (a built site); raise FileNotFoundError when there is none."""
    root = Path(root).resolve()
    pages = sorted(root.rglob("*.html"))
    if not pages:
        raise FileNotFoundError(f"{root}: no HTML pages (build the site first: make docs)")
    parsed = {p: _parse(p) for p in pages}
    broken, external, internal = [], set(), 0
    for page, info in parsed.items():
        for link in info.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                if parts.scheme not in ("data", "javascript"):
                    external.add(link)
                continue
            internal += 1
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = str(page.relative_to(root))
            if root not in target.parents and target != root:
                broken.append((where, link, "outside the site"))
            elif not target.is_file():
                broken.append((where, link, "no such file"))
            elif parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append((where, link, f"no anchor #{parts.fragment} in {target.name}"))
    return LinkReport(len(pages), internal, tuple(broken), tuple(sorted(external)))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    report = check_site(Path(args[0] if args else "out/docs"))
    for page, link, why in report.broken:
        print(f"broken: {page}: {link} ({why})")
    for link in report.external:
        print(f"external (not fetched: no network): {link}")
    print(f"{report.pages} pages, {report.internal} internal links, {len(report.broken)} broken, "
          f"{len(report.external)} external listed")
    return 1 if report.broken else 0


if __name__ == "__main__":
    sys.exit(main())
