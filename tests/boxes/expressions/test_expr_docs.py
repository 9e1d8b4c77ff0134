"""The language reference (docs/expressions.md) names every function, alias and error code."""

from __future__ import annotations

from pathlib import Path

import pytest

from boxes import codes
from boxes.expressions import functions

DOC = (Path(__file__).resolve().parents[3] / "docs" / "expressions.md").read_text(encoding="utf-8")
NAMES = sorted({*functions.FUNCTIONS, *functions.ALIASES})
CODES = sorted(codes.in_group("expression"))


@pytest.mark.parametrize("name", NAMES)
def test_function_is_documented(name):
    assert f"`{name}(" in DOC or f"(`{name}`)" in DOC


@pytest.mark.parametrize("code", CODES)
def test_error_code_is_documented(code):
    assert f"| `{code}` |" in DOC
