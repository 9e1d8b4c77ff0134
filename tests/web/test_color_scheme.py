"""Dark mode follows the system's setting (``prefers-color-scheme``): dark surfaces, and text
that stays readable on them (WCAG contrast of at least 4.5:1) in both schemes, on the editor's
page, a box on the canvas and a form field."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.steps import drop


def luminance(css: str) -> float:
    """Relative luminance (WCAG 2) of a computed ``rgb(...)`` colour."""
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def colours(page, selector: str) -> tuple[str, str]:
    return page.locator(selector).first.evaluate(
        "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]"
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_pages_follow_the_systems_color_scheme_and_stay_readable(login, scheme):
    page = login("al")
    page.emulate_media(color_scheme=scheme)
    drop(page, "filter", 300, 200)
    expect(page.locator(".drawflow-node.box")).to_have_count(1)
    text, background = page.evaluate(
        "() => [getComputedStyle(document.documentElement).color,"
        " getComputedStyle(document.documentElement).backgroundColor]"
    )
    assert (luminance(background) < 0.05) == (scheme == "dark"), background
    assert contrast(text, background) >= 4.5
    node_text, node_background = colours(page, ".drawflow-node.box")
    assert (luminance(node_background) < 0.05) == (scheme == "dark"), node_background
    assert contrast(node_text, node_background) >= 4.5
    field_text, field_background = colours(page, ".properties input")
    assert contrast(field_text, field_background) >= 4.5
