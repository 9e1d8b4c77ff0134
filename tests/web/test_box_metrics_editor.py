"""A running diagram's boxes on the canvas (issue 19), in Chromium, checked against the server:
each box shows the rows that went in and out of it, and a failed query is shown, with its
message, on the output box whose query failed (also once the runtime has given up on it), until
the diagram runs again."""

from __future__ import annotations

import datetime as dt
import re

from playwright.sync_api import Page, expect

from tests.server.serverkit import wait_until
from tests.web.steps import box, editor_notice
from tests.web.test_editor import filtered, open_diagram, toolbar

MARKED = re.compile(r"\bhas-problem\b")
STAMP = dt.datetime(2026, 3, 2, tzinfo=dt.timezone.utc).isoformat()


def counts_of(page: Page, name: str):
    return box(page, name).locator(".box-metrics")


def fault_of(page: Page, name: str):
    return box(page, name).locator(".box-fault")


def listed(live, name: str) -> str:
    """The diagram's status in the list of diagrams."""
    (found,) = [
        d for d in live.api("al", "GET", "/diagrams").json()["diagrams"] if d["name"] == name
    ]
    return found["status"]


def test_a_running_diagram_shows_rows_in_and_out_on_each_box(login, live, stored):
    name = stored(filtered("counted", "price > 500"))
    live.api("al", "POST", f"/diagrams/{name}/deploy")
    page = login("al")
    open_diagram(page, name)
    expect(counts_of(page, "cheap")).to_have_text("in 0 · out 0")

    prices = (777.0, 1.0, 2.0)
    tuples = [{"time": STAMP, "symbol": "m", "price": p} for p in prices]
    live.api("ed", "POST", "/streams/in1/tuples", json=tuples)
    expect(counts_of(page, "in1")).to_have_text("out 3")
    expect(counts_of(page, "cheap")).to_have_text("in 3 · out 1")
    expect(counts_of(page, f"{name}_out")).to_have_text("in 1 · out 1")
    boxes = live.api("al", "GET", f"/diagrams/{name}/status").json()["progress"]["boxes"]
    assert {n: (b["rows_in"], b["rows_out"]) for n, b in boxes.items()} == {
        "in1": (None, 3),
        "cheap": (3, 1),
        f"{name}_out": (1, 1),
    }

    # stopped, it counts nothing: the boxes show no rows
    toolbar(page, "Stop").click()
    expect(editor_notice(page)).to_have_text(f"{name} is stopped.")
    expect(page.locator(".box-metrics")).to_have_count(0)


def test_a_failed_query_shows_on_its_output_box_until_the_diagram_runs_again(
    login, live, stored, tmp_path
):
    name = stored(filtered("broken"))
    output = f"{name}_out"
    live.api("al", "POST", f"/diagrams/{name}/deploy")
    live.api("al", "POST", f"/diagrams/{name}/stop")
    live.api("ed", "POST", "/streams/in1/tuples", json=[{"time": STAMP, "symbol": "g", "price": 5}])
    segments = live.svc.runtime.log.directory("in1")
    aside = tmp_path / "aside"
    aside.mkdir()
    for segment in segments.glob("*.seg"):
        segment.rename(aside / segment.name)  # the rows the diagram resumes from are gone
    try:
        live.api("al", "POST", f"/diagrams/{name}/deploy")
        # opened once the runtime has given up on it (its restarts spent): listed as failed
        wait_until(lambda: listed(live, name) == "failed", 120, f"{name} listed as failed")
        page = login("al")
        open_diagram(page, name)
        expect(fault_of(page, output)).to_contain_text("[LOG_GAP]")
        expect(box(page, output)).to_have_class(MARKED)
        expect(fault_of(page, "cheap")).to_have_count(0)
        progress = live.api("al", "GET", f"/diagrams/{name}/status").json()["progress"]
        assert progress["failed_output"] == output and "[LOG_GAP]" in progress["error"]
    finally:
        for segment in aside.iterdir():
            segment.rename(segments / segment.name)

    toolbar(page, "Deploy").click()  # fixed: it runs again, and the mark goes
    expect(editor_notice(page)).to_have_text(f"{name} is running.")
    expect(fault_of(page, output)).to_have_count(0)
    expect(box(page, output)).not_to_have_class(MARKED)
