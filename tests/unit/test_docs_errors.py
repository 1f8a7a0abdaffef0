"""docs/contracts.md documents every exception class simtsafe exports.

Each name in ``simtsafe._errors.__all__`` must appear in docs/contracts.md as a
Markdown heading (``### Name``) or as the first cell of a table row
(``| Name |`` or ``| `Name` |``), so a new error class cannot ship
undocumented.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simtsafe import _errors

CONTRACTS = Path(__file__).resolve().parents[2] / "docs" / "contracts.md"


def _documented(text: str) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+`?(\w+)`?\s*$", text, flags=re.MULTILINE)
    rows = re.findall(r"^\|\s*`?(\w+)`?\s*\|", text, flags=re.MULTILINE)
    return set(headings) | set(rows)


@pytest.mark.parametrize("name", sorted(_errors.__all__))
def test_error_class_documented(name: str) -> None:
    assert name in _documented(CONTRACTS.read_text()), (
        f"{name} (simtsafe._errors.__all__) has no heading or table row in docs/contracts.md"
    )


def test_every_exported_error_is_an_exception() -> None:
    for name in _errors.__all__:
        assert issubclass(getattr(_errors, name), Exception), name
