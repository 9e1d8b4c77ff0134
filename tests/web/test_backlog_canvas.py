"""The backlog on the canvas (issue 39), in Chromium: while a running diagram's output batch is
held in its sink (a real batch, stopped where it logs its results) and rows keep arriving, the
arrow out of the input says how many rows wait, the output box says so too, and the list of
diagrams badges the diagram "behind"; released, it catches up and the badge goes."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.server.serverkit import HeldBatches, stamped_now
from tests.web.conftest import screenshot
from tests.web.steps import box
from tests.web.test_editor import filtered, open_diagram


def test_the_canvas_shows_rows_waiting_and_a_badge_when_behind(login, live, stored, monkeypatch):
    batches = HeldBatches(live.svc.runtime, monkeypatch)
    name = stored(filtered("lagging", "price > 0.125"))
    output = f"{name}_out"
    live.api("al", "POST", f"/diagrams/{name}/deploy")
    page = login("al")
    open_diagram(page, name)
    live.api("ed", "POST", "/streams/in1/tuples", json=stamped_now(1))
    arrow_label = page.locator("#drawflow svg.connection text.arrow-backlog").first
    expect(box(page, output).locator(".box-backlog")).to_contain_text("0 waiting")
    badge = page.locator(f'.diagram-list li[data-diagram="{name}"] .badge-behind')
    expect(badge).to_have_count(0)

    with batches:
        live.api("ed", "POST", "/streams/in1/tuples", json=stamped_now(1))  # its batch is held
        live.api("ed", "POST", "/streams/in1/tuples", json=stamped_now(2000))
        expect(badge).to_have_text("behind")
        expect(arrow_label).to_have_text("2,001 waiting")
        expect(box(page, output).locator(".box-backlog.behind")).to_contain_text("2,001 waiting")
        screenshot(page, "editor-backlog")
    expect(badge).to_have_count(0)
    expect(arrow_label).to_have_text("0 waiting")
