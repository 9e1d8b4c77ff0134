"""Catalog search: typing words keeps the objects whose type, name, kind or owner contain them
all, checked against the server's own list of what the user may view."""

from __future__ import annotations

from playwright.sync_api import expect


def matching(objects: list[dict], text: str) -> list[str]:
    words = text.lower().split()
    out = []
    for o in objects:
        cells = [o["type"], o["name"], o.get("kind") or "", o["owner"]["user"] or ""]
        cells += [o["owner"]["role"], str(o.get("source_index") or "")]
        if all(w in " ".join(cells).lower() for w in words):
            out.append(f"{o['type']}/{o['name']}")
    return out


def test_search_narrows_the_catalog_to_what_matches(login, live):
    page = login("al")
    page.get_by_role("link", name="Catalog").click()
    objects = live.api("al", "GET", "/catalog").json()["objects"]
    rows = page.locator("#page-catalog tr[data-object]")
    expect(rows).to_have_count(len(objects))
    search = page.get_by_label("Search the catalog")
    for text in ("output", "STREAM in", "q1", "no such thing"):
        search.fill(text)
        want = matching(objects, text)
        visible = page.locator("#page-catalog tr[data-object]:visible")
        expect(visible).to_have_count(len(want))
        assert [r.get_attribute("data-object") for r in visible.all()] == want
        expect(page.locator(".catalog-search .hint")).to_have_text(
            f"{len(want)} of {len(objects)} objects"
        )
    search.fill("")
    expect(page.locator("#page-catalog tr[data-object]:visible")).to_have_count(len(objects))
