"""What a user does with the pages, step by step, as Playwright actions (shared by the tests)."""

from __future__ import annotations

import datetime as dt

from playwright.sync_api import Locator, Page, expect

from tests.web.conftest import Live

HOSTILE = "<img src=x onerror=alert(1)>"


def box(page: Page, name: str) -> Locator:
    return page.locator(f'.drawflow-node[data-name="{name}"]')


def drop(page: Page, box_type: str, x: int, y: int) -> None:
    """Drag a palette entry onto the canvas at (x, y) of the canvas."""
    page.locator(f'.palette-item[data-type="{box_type}"]').drag_to(
        page.locator("#drawflow"), target_position={"x": x, "y": y}
    )


def rename(page: Page, old: str, new: str) -> None:
    box(page, old).click()
    name = page.locator(".properties").get_by_label("Name")
    name.fill(new)
    name.press("Enter")
    expect(box(page, new)).to_be_visible()


def arrow(page: Page, source: str, target: str, port: int = 1) -> None:
    """Draw an arrow from a box's output port to another box's input port."""
    box(page, source).locator(".output_1").drag_to(box(page, target).locator(f".input_{port}"))


def set_field(page: Page, box_name: str, label: str, value: str) -> None:
    box(page, box_name).click()
    page.locator(".properties").get_by_label(label, exact=True).fill(value)


def build_q1(page: Page) -> None:
    """The paper's q1: in1 and in2 into a union, a 10 s average per symbol, output out1."""
    page.get_by_label("Diagram name").fill("q1")
    drop(page, "input", 15, 40)
    drop(page, "input", 15, 200)
    expect(box(page, "in1")).to_be_visible()
    expect(box(page, "in2")).to_be_visible()
    drop(page, "union", 190, 120)
    drop(page, "aggregate", 365, 120)
    drop(page, "output", 540, 120)
    rename(page, "union1", "merged")
    rename(page, "aggregate1", "avg")
    rename(page, "output1", "out1")
    arrow(page, "in1", "merged")
    arrow(page, "in2", "merged")
    arrow(page, "merged", "avg")
    arrow(page, "avg", "out1")
    set_field(page, "avg", "size", "10s")
    set_field(page, "avg", "group_by", "symbol")
    set_field(page, "avg", "aggregates (required)", "avg_price: avg(price)\nn: count()")


def confirm(page: Page, answer: str) -> None:
    """Answer the open confirmation dialog with its ``answer`` button (the verb, or Cancel)."""
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name=answer, exact=True).click()
    expect(dialog).to_be_hidden()


def watch_scripts(page: Page) -> list[str]:
    """Every dialog (dismissed) and uncaught script error of the page, as it happens.

    An injected ``<img src=x onerror=alert(1)>`` that ran would show up here as ``alert: 1``.
    """
    seen: list[str] = []

    def on_dialog(dialog) -> None:
        seen.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda error: seen.append(f"error: {error}"))
    return seen


def palette_types(page: Page) -> list[str]:
    return page.locator(".palette-item").evaluate_all("els => els.map(e => e.dataset.type)")


def editor_notice(page: Page) -> Locator:
    return page.locator("#page-editor .toolbar .notice")


def admin_tab(page: Page, tab: str) -> Locator:
    """Open a tab of the admin console; return its pane."""
    page.get_by_role("link", name="Admin").click()
    page.get_by_role("tab", name=tab).click()
    return page.locator(f"#admin-{tab.lower()}")


def open_results(page: Page, output: str) -> None:
    page.get_by_role("link", name="Live results").click()
    pane = page.locator("#page-results")
    pane.get_by_label("Output", exact=True).select_option(output)
    pane.get_by_role("button", name="Subscribe", exact=True).click()
    expect(page.locator("#page-results .notice")).to_contain_text(f"Subscribed to {output}")


def grant(pane: Locator, role: str, action: str, object_label: str | None = None) -> None:
    """Fill a grant form (the admin console's names the object; the catalog's has one)."""
    form = pane.get_by_role("form", name="Grant a permission")
    if object_label is not None:
        form.get_by_label("Object").select_option(label=object_label)
    form.get_by_label("Role").fill(role)
    form.get_by_label("Action").select_option(action)
    form.get_by_role("button", name="Grant").click()
    expect(pane.locator(".notice.ok")).to_contain_text(f"Granted {action}")


def admin_permissions(page: Page) -> Locator:
    return admin_tab(page, "Permissions")


def catalog_object(page: Page, type_: str, name: str) -> Locator:
    """Open an object's permissions in the catalog browser; return the detail pane."""
    page.get_by_role("link", name="Catalog").click()
    page.locator(f'tr[data-object="{type_}/{name}"]').get_by_role("button", name=name).click()
    return page.locator("#page-catalog .detail")


def drop_socket(page: Page) -> None:
    """Close the page's socket, as a network blip or a server restart would."""
    page.evaluate("import('/static/js/socket.js').then((socket) => socket.disconnect())")


def reconnect(page: Page) -> None:
    """Open the page's socket again with its session's CSRF token, as socket.io does after a
    blip."""
    page.evaluate(
        "Promise.all([import('/static/js/socket.js'), import('/static/js/api.js')])"
        ".then(([socket, api]) => socket.connect(api.getCsrf()))"
    )


def result_rows(page: Page, window_start: str | None = None) -> Locator:
    """The rows of the live results table, or those of the window that starts at
    ``window_start``."""
    rows = page.locator("table.tuples tbody tr")
    if window_start is None:
        return rows
    return rows.filter(has=page.locator("td:first-child", has_text=window_start))


class Feed:
    """Ed's data: each tick fills the next 10-second window of in1 and in2.

    Symbol A comes only from in1, B only from in2, C from both, and a hostile symbol from in1,
    so each closed window gives one result labelled {in1}, {in2} and {in1, in2}, plus {in1}.
    """

    START = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)

    def __init__(self, live: Live) -> None:
        self.live = live
        self.window = 0

    def tick(self) -> str:
        """Send one window's tuples; return the window's start as the results show it."""
        at = self.START + dt.timedelta(seconds=10 * self.window)
        stamp = (at + dt.timedelta(seconds=1)).isoformat()
        per_stream = {"in1": ["A", "C", HOSTILE], "in2": ["B", "C"]}
        for stream, symbols in per_stream.items():
            tuples = [{"time": stamp, "symbol": s, "price": 10.0 + self.window} for s in symbols]
            self.live.api("ed", "POST", f"/streams/{stream}/tuples", json=tuples)
        self.window += 1
        return at.strftime("%Y-%m-%dT%H:%M:%S")
