"""Every page under docs/ is linked from the README, and the README's links resolve."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
LINKS = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)


def test_every_docs_page_is_linked_from_the_readme() -> None:
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert pages - set(LINKS) == set(), f"docs pages the README does not link: {pages - set(LINKS)}"


def test_readme_links_resolve() -> None:
    local = [link for link in LINKS if "://" not in link]
    assert local
    for link in local:
        assert (ROOT / link).exists(), f"README links {link}, which does not exist"
