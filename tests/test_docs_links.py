"""Every relative link in README.md, docs/*.md and repos/README.md names a file that exists.

The README was cut to one screen and its sections moved into docs/ pages, where a link
is relative to another folder: a link written for one place and left in the other points
at nothing, and no reader reports it. Anchors into Markdown pages are checked as well,
with GitHub's heading slugs, since moved sections changed which page holds a heading.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "repos" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def broken(page: Path) -> list[str]:
    found = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # an absolute URL
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            found.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            found.append(f"{target} (no such heading)")
    return found


def test_pages_are_found() -> None:
    assert len(PAGES) > 8


def test_every_relative_link_resolves() -> None:
    bad = {str(p.relative_to(ROOT)): b for p in PAGES if (b := broken(p))}
    assert bad == {}


def test_slug_follows_github() -> None:
    assert slug("Integrity: the checkout is the pinned commit, checked before any tier") == (
        "integrity-the-checkout-is-the-pinned-commit-checked-before-any-tier")
    assert slug("Assets: everything about one is in its `Asset(...)`") == (
        "assets-everything-about-one-is-in-its-asset")
