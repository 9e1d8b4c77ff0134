"""Live charts (issue 19) drawn by the vendored uPlot: the results page plots an output's numeric
fields over its event time, and the editor's diagram list plots each running diagram's rows per
second and latency per output over the viewer's clock; both with time axes, a legend, a tooltip
with the value under the cursor, and the page's colours in either scheme."""

from __future__ import annotations

import datetime as dt
import re
import time

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.paper import q1
from tests.web.conftest import screenshot
from tests.web.steps import HOSTILE, Feed, open_results, result_rows
from tests.web.test_color_scheme import contrast

OUTPUT = "out_chart"
TICK = re.compile(r"^\d\d:\d\d:\d\d$")


@pytest.fixture(scope="module")
def diagram(live):
    doc = q1(outputs={})
    doc["name"], doc["outputs"] = "qchart", {OUTPUT: {"from": "avg"}}
    live.api("al", "POST", "/diagrams", json={"document": doc})
    live.api("al", "POST", "/diagrams/qchart/deploy")
    yield "qchart"
    live.api("al", "POST", "/diagrams/qchart/stop")
    live.api("al", "DELETE", "/diagrams/qchart")


def inked(chart: Locator, strip: str) -> int:
    """How many pixels are drawn in the plot's canvas strip ``"bottom"`` (the time axis) or
    ``"left"`` (the value axis)."""
    return chart.locator("canvas").evaluate(
        """(canvas, strip) => {
          const ratio = canvas.width / canvas.clientWidth;
          const [x, y, w, h] = strip === "bottom"
            ? [0, canvas.height - 20 * ratio, canvas.width, 20 * ratio]
            : [0, 0, 30 * ratio, canvas.height - 30 * ratio];
          const pixels = canvas.getContext("2d").getImageData(x, y, w, h).data;
          let inked = 0;
          for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) inked += 1;
          return inked;
        }""",
        strip,
    )


def drawn(chart: Locator, strip: str, timeout: float = 30) -> int:
    """``inked`` once the chart has drawn that strip (uPlot draws on a later frame, and the
    latency chart again once the first latency arrives), or as it is after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (count := inked(chart, strip)) <= 50 and time.monotonic() < deadline:
        chart.page.wait_for_timeout(100)  # poll: a canvas draws without an event
    return count


def time_ticks(chart: Locator) -> list[str]:
    """The time axis's labels as drawn, from the canvas's description for screen readers."""
    label = chart.locator("canvas").get_attribute("aria-label") or ""
    found = re.search(r"\(UTC\) (\S+) to (\S+)$|time (\S+) to (\S+)$", label)
    assert found, label
    return [t for t in found.groups() if t]


def value_range(chart: Locator) -> tuple[float, float]:
    """The value axis's lowest and highest labels as drawn, from the canvas's description."""
    label = chart.locator("canvas").get_attribute("aria-label") or ""
    found = re.search(r", values (\S+) to ([^\s,]+)", label)
    assert found, label
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}

    def number(text: str) -> float:
        return float(text[:-1]) * scale[text[-1]] if text[-1] in scale else float(text)

    low, high = found.groups()
    return number(low), number(high)


def hover(page: Page, chart: Locator) -> Locator:
    """Move the cursor over the middle of the plot; return the tooltip."""
    over = chart.locator(".u-over")
    over.scroll_into_view_if_needed()
    box = over.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tip = chart.locator(".chart-tip")
    expect(tip).to_be_visible()
    return tip


def tip_line(tip: Locator, pattern: str) -> Locator:
    """The tooltip's lines that read exactly ``pattern``."""
    return tip.locator("div").filter(has_text=re.compile(f"^{pattern}$"))


def marker(chart: Locator, series: str) -> Locator:
    """The colour swatch of a series in the chart's legend."""
    return chart.locator(".u-legend .u-series", has_text=series).locator(".u-marker")


def test_the_results_chart_plots_numeric_fields_over_event_time(login, live, diagram):
    al = login("al")
    open_results(al, OUTPUT)
    feed = Feed(live)
    feed.START = dt.datetime(2040, 1, 1, tzinfo=dt.timezone.utc)  # after other tests' data
    windows = [feed.tick() for _ in range(3)]  # the third closes the second window
    # a new query's first batches: slow on a machine shared with other test runs
    expect(result_rows(al, windows[1])).to_have_count(4, timeout=150_000)

    pane = al.locator("#page-results .results-chart")
    chart = pane.locator(".chart")
    legend = chart.locator(".u-legend")
    # grouped results: one line per symbol, of the first numeric field
    expect(pane.get_by_label("Field", exact=True)).to_have_value("avg_price")
    expect(pane.get_by_label("One line per", exact=True)).to_have_value("symbol")
    labels = legend.locator(".u-label")
    expect(labels).to_have_count(5)
    assert sorted(labels.all_inner_texts()) == sorted(["window_end (UTC)", "A", "B", "C", HOSTILE])
    assert inked(chart, "bottom") > 50 and inked(chart, "left") > 50  # both axes are drawn
    first, last = time_ticks(chart)
    assert TICK.match(first) and TICK.match(last), (first, last)
    # labelled at UTC times within the window ends (00:00:10 and 00:00:20)
    assert "00:00:10" <= first < last <= "00:00:20", (first, last)
    tip = hover(al, chart)
    screenshot(al, "results-chart")
    expect(tip.locator(".chart-tip-time")).to_contain_text("2040-01-01 00:00:")
    # every group's value at the time under the cursor (window w's average price is 10 + w)
    for symbol in ("A", "B", "C", HOSTILE):
        expect(tip_line(tip, rf"{re.escape(symbol)}: 1[01]")).to_have_count(1)

    # every numeric field, one line each
    pane.get_by_label("Field", exact=True).select_option("")
    pane.get_by_label("One line per", exact=True).select_option("")
    expect(legend.locator(".u-series")).to_have_count(3)  # the time, avg_price and n
    tip = hover(al, chart)
    for value in (r"avg_price: 1[01]", r"n: [12]"):
        expect(tip_line(tip, value)).to_have_count(1)

    swatch = marker(chart, "avg_price")
    light = swatch.evaluate("e => getComputedStyle(e).borderTopColor")
    al.emulate_media(color_scheme="dark")
    expect(swatch).not_to_have_css("border-top-color", light)  # redrawn in the dark colours
    tip = hover(al, chart)
    text, background = tip.evaluate(
        "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]"
    )
    assert contrast(text, background) >= 4.5
    screenshot(al, "results-chart-dark")


@pytest.mark.parametrize("width", [1024, 800])
def test_a_running_diagram_charts_rate_and_latency_per_output(login, live, diagram, width):
    al = login("al")
    al.set_viewport_size({"width": width, "height": 800})
    row = al.locator(f'.diagram-list li[data-diagram="{diagram}"]')
    for caption in ("rows/s", "latency"):
        chart = row.locator(".chart", has=al.locator("figcaption", has_text=caption))
        expect(chart.locator(".u-legend")).to_contain_text(OUTPUT)
        # the chart takes the sidebar's width and stays within it
        plot, sidebar = chart.locator(".uplot"), al.locator(".sidebar")
        assert plot.bounding_box()["width"] <= sidebar.bounding_box()["width"]
        assert plot.bounding_box()["width"] > 100
        assert drawn(chart, "bottom") > 50 and drawn(chart, "left") > 20
        assert all(TICK.match(t) for t in time_ticks(chart))
        # a value axis with a span, even over one sample or a constant latency
        low, high = value_range(chart)
        assert low < high, (caption, low, high)
    rate = row.locator(".chart", has=al.locator("figcaption", has_text="rows/s"))
    tip = hover(al, rate)
    screenshot(al, f"diagram-charts-{width}")
    expect(tip_line(tip, rf"{OUTPUT}: \d+(\.\d+)?")).to_have_count(1)
