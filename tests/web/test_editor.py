"""The editor's everyday work (issue 19): saving a loaded diagram updates it, deploy saves edits
first and shows it is busy, New, Stop and Delete behave with nothing selected or named, a
single-input port refuses a second arrow, deletes ask first, a loaded diagram fits the canvas,
the canvas is usable at 1024 px, and undo/redo, copy/paste, multi-select, export/import and
their shortcuts work."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from server.runtime.modes import REAL_TIME
from tests.web.conftest import screenshot
from tests.web.steps import arrow, box, confirm, editor_notice, set_field, watch_scripts


def filtered(name: str, where: str = "price > 1") -> dict:
    """in1 -> a filter -> an output named after the diagram."""
    return {
        "version": 1,
        "name": name,
        "inputs": {"in1": {}},
        "boxes": {"cheap": {"type": "filter", "in": "in1", "where": where}},
        "outputs": {f"{name}_out": {"from": "cheap"}},
    }


def wide(name: str) -> dict:
    """Four columns, like q1: in1 and in2, a union, an average, an output."""
    return {
        "version": 1,
        "name": name,
        "inputs": {"in1": {}, "in2": {}},
        "boxes": {
            "merged": {"type": "union", "in": ["in1", "in2"]},
            "avg": {
                "type": "aggregate",
                "in": "merged",
                "window": {"size": "10s"},
                "group_by": ["symbol"],
                "aggregates": {"avg_price": "avg(price)"},
            },
        },
        "outputs": {f"{name}_out": {"from": "avg"}},
    }


def open_diagram(page: Page, name: str) -> None:
    page.locator(f'.diagram-list li[data-diagram="{name}"]').get_by_role(
        "button", name=name
    ).click()
    expect(editor_notice(page)).to_contain_text(f"Loaded {name}")


def where_of(live, name: str) -> str:
    return live.api("al", "GET", f"/diagrams/{name}").json()["document"]["boxes"]["cheap"]["where"]


def toolbar(page: Page, label: str):
    return page.locator("#page-editor").get_by_role("button", name=label, exact=True)


def boxes(page: Page):
    return page.locator("#drawflow .drawflow-node")


def test_save_updates_a_loaded_diagram_and_deploy_saves_edits_first(login, live, stored):
    name = stored(filtered("edited"))
    page = login("al")
    scripts = watch_scripts(page)
    open_diagram(page, name)
    set_field(page, "cheap", "where (required)", "price > 2")
    toolbar(page, "Save").click()
    expect(editor_notice(page)).to_have_text(f"Updated {name}.")
    assert where_of(live, name) == "price > 2"

    # an edit, then Deploy: the edit is saved first, and the page is busy while it deploys
    set_field(page, "cheap", "where (required)", "price > 3")
    toolbar(page, "Deploy").click()
    expect(toolbar(page, "Deploy")).to_be_disabled()
    expect(page.locator("#page-editor")).to_have_attribute("aria-busy", "true")
    expect(editor_notice(page)).to_have_text(f"{name} is running.")
    expect(toolbar(page, "Deploy")).to_be_enabled()
    assert where_of(live, name) == "price > 3"

    # saving a running diagram swaps the edit in (Node-RED's Deploy): the page says what
    # each output kept
    set_field(page, "cheap", "where (required)", "price > 4")
    toolbar(page, "Save").click()
    expect(editor_notice(page)).to_have_text(
        f"Updated {name}. Swapped while running: {name}_out kept its state and missed no result."
    )
    assert where_of(live, name) == "price > 4"
    assert live.api("al", "GET", f"/diagrams/{name}/status").json()["status"] == "running"

    # stop, then deploy again: the saved version runs
    toolbar(page, "Stop").click()
    expect(editor_notice(page)).to_have_text(f"{name} is stopped.")
    toolbar(page, "Deploy").click()
    expect(editor_notice(page)).to_have_text(f"{name} is running.")
    assert where_of(live, name) == "price > 4"
    assert live.api("al", "GET", f"/diagrams/{name}/status").json()["status"] == "running"
    assert scripts == []


def test_deploy_refuses_a_stored_name_the_canvas_does_not_hold(login, live, stored):
    name = stored(filtered("elsewhere"))
    page = login("al")
    page.get_by_label("Diagram name").fill(name)
    toolbar(page, "Deploy").click()
    expect(editor_notice(page)).to_contain_text(f"A diagram named {name} is stored")
    assert live.api("al", "GET", f"/diagrams/{name}").json()["status"] == "stopped"


def test_the_page_opens_unnamed_and_new_with_a_box_selected_clears_it(login):
    page = login("al")
    scripts = watch_scripts(page)
    expect(page.get_by_label("Diagram name")).to_have_value("")
    expect(boxes(page)).to_have_count(0)
    page.get_by_label("Diagram name").fill("draft")
    page.locator('.palette-item[data-type="filter"]').click()
    box(page, "filter1").click()
    expect(page.locator(".properties")).to_be_visible()
    toolbar(page, "New").click()
    confirm(page, "Discard")  # the box is unsaved work (tests/web/test_unsaved.py)
    expect(boxes(page)).to_have_count(0)
    expect(page.locator(".properties")).to_have_count(0)
    expect(page.locator(".properties-box .hint")).to_be_visible()
    expect(page.get_by_label("Diagram name")).to_have_value("")
    expect(editor_notice(page)).to_have_text("")
    assert scripts == []


@pytest.mark.parametrize("action", ["Stop", "Delete"])
def test_stop_and_delete_without_a_name_say_what_is_missing(login, action):
    page = login("al")
    sent = []
    page.on("request", lambda r: sent.append(r.url) if "/diagrams/" in r.url else None)
    toolbar(page, action).click()
    expect(editor_notice(page)).to_have_text(
        f"Type a diagram's name, or open one from Your diagrams, to {action.lower()} it."
    )
    expect(page.get_by_label("Diagram name")).to_be_focused()
    assert sent == []


def test_a_second_arrow_into_a_single_input_port_is_refused(login):
    page = login("al")
    for box_type in ("input", "input", "filter"):
        page.locator(f'.palette-item[data-type="{box_type}"]').click()
    arrow(page, "in1", "filter1")
    arrow(page, "in2", "filter1")
    expect(editor_notice(page)).to_contain_text(
        'filter1\'s port "in" takes one arrow and already has one from in1'
    )
    expect(page.locator("#drawflow svg.connection")).to_have_count(1)
    box(page, "filter1").click()
    expect(page.locator(".properties .port")).to_contain_text("in1")
    screenshot(page, "editor-arrow-refused")


def test_deleting_a_diagram_asks_first(login, live, stored):
    name = stored(filtered("doomed"))
    page = login("al")
    open_diagram(page, name)
    toolbar(page, "Delete").click()
    expect(page.get_by_role("alertdialog")).to_contain_text(f"Delete diagram {name}?")
    screenshot(page, "editor-confirm-delete")
    confirm(page, "Cancel")
    assert live.call("al", "GET", f"/diagrams/{name}").status_code == 200
    toolbar(page, "Delete").click()
    confirm(page, "Delete")
    expect(editor_notice(page)).to_have_text(f"Deleted {name}.")
    assert live.call("al", "GET", f"/diagrams/{name}").status_code == 404


def test_deleting_a_user_a_role_or_a_grant_asks_first(login, live):
    live.api("joe", "POST", "/roles", json={"name": "TEMP"})
    live.api(
        "joe", "POST", "/users", json={"name": "tim", "password": "a long password 1", "roles": []}
    )
    live.api("joe", "PUT", "/permissions/stream/in2/TEMP/VIEW_OBJECT")
    page = login("joe")
    page.get_by_role("link", name="Admin").click()
    cases = [
        ("Users", "Delete user tim", "Delete"),
        ("Permissions", "Revoke VIEW_OBJECT on stream in2 from TEMP", "Revoke"),
        ("Roles", "Delete role TEMP", "Delete"),
    ]
    present = {
        "Users": lambda: (
            "tim" in [u["name"] for u in live.api("joe", "GET", "/users").json()["users"]]
        ),
        "Permissions": lambda: any(
            r["role"] == "TEMP"
            for r in live.api("joe", "GET", "/permissions").json()["permissions"]
        ),
        "Roles": lambda: "TEMP" in live.api("joe", "GET", "/roles").json()["roles"],
    }
    for tab, button, verb in cases:
        page.get_by_role("tab", name=tab).click()
        page.get_by_role("button", name=button).click()
        confirm(page, "Cancel")
        assert present[tab]()
        page.get_by_role("button", name=button).click()
        confirm(page, verb)
        expect(page.get_by_role("button", name=button)).to_have_count(0)
        assert not present[tab]()


def test_a_non_administrator_sees_a_schemas_fields(login, live):
    schema = live.api("al", "GET", "/schemas/s").json()["schema"]
    page = login("al")
    page.get_by_role("link", name="Catalog").click()
    page.locator('tr[data-object="schema/s"]').get_by_role("button", name="s").click()
    fields = page.locator("#page-catalog .schema-fields tbody tr td:first-child")
    expect(fields).to_have_text(list(schema["fields"]))
    detail = page.locator("#page-catalog .detail")
    expect(detail).to_contain_text("Only this object's owner")
    expect(detail).not_to_contain_text("CHANGE_SYSTEM")
    expect(detail.locator("table.permissions")).to_be_hidden()
    screenshot(page, "catalog-schema")


def inside_canvas(page: Page) -> list[str]:
    """The boxes that do not show whole inside the canvas."""
    return page.evaluate(
        """() => {
          const c = document.querySelector('#drawflow').getBoundingClientRect();
          return [...document.querySelectorAll('#drawflow .drawflow-node')].filter((n) => {
            const b = n.getBoundingClientRect();
            return b.left < c.left || b.top < c.top || b.right > c.right || b.bottom > c.bottom;
          }).map((n) => n.dataset.name);
        }"""
    )


@pytest.mark.parametrize("width, height", [(1280, 800), (1024, 768)])
def test_a_loaded_diagram_fits_and_the_canvas_is_usable(login, stored, width, height):
    name = stored(wide(f"wide{width}"))
    page = login("al")
    page.set_viewport_size({"width": width, "height": height})
    canvas = page.locator("#drawflow").bounding_box()
    assert canvas["width"] >= 0.5 * width and canvas["height"] >= 400, canvas
    open_diagram(page, name)
    expect(boxes(page)).to_have_count(5)
    assert inside_canvas(page) == []
    screenshot(page, f"editor-fit-{width}")


def test_undo_and_redo_by_button_and_keyboard(login):
    page = login("al")
    page.locator('.palette-item[data-type="input"]').click()
    page.locator('.palette-item[data-type="filter"]').click()
    arrow(page, "in1", "filter1")
    connections = page.locator("#drawflow svg.connection")
    expect(connections).to_have_count(1)
    toolbar(page, "Undo").click()
    expect(connections).to_have_count(0)
    expect(boxes(page)).to_have_count(2)
    toolbar(page, "Undo").click()
    expect(boxes(page)).to_have_count(1)
    toolbar(page, "Redo").click()
    toolbar(page, "Redo").click()
    expect(boxes(page)).to_have_count(2)
    expect(connections).to_have_count(1)
    set_field(page, "filter1", "where (required)", "price > 5")
    page.locator(".properties").get_by_label("where (required)", exact=True).press("Tab")
    page.locator("#drawflow").click(position={"x": 500, "y": 380})
    page.keyboard.press("Control+z")
    box(page, "filter1").click()
    expect(page.locator(".properties").get_by_label("where (required)", exact=True)).to_have_value(
        ""
    )
    page.keyboard.press("Control+Shift+z")
    box(page, "filter1").click()
    expect(page.locator(".properties").get_by_label("where (required)", exact=True)).to_have_value(
        "price > 5"
    )
    page.keyboard.press("Control+y")  # nothing left to redo
    expect(boxes(page)).to_have_count(2)


def test_multi_select_copy_paste_and_delete(login):
    page = login("al")
    page.locator('.palette-item[data-type="input"]').click()
    page.locator('.palette-item[data-type="filter"]').click()
    arrow(page, "in1", "filter1")
    set_field(page, "filter1", "where (required)", "price > 7")
    box(page, "in1").click()
    box(page, "filter1").click(modifiers=["Shift"])
    expect(page.locator("#drawflow .drawflow-node.picked")).to_have_count(2)
    page.keyboard.press("Control+c")
    expect(editor_notice(page)).to_have_text("Copied 2 boxes.")
    page.keyboard.press("Control+v")
    # the copies get free names (an input the next readable stream) and keep their arrow
    expect(boxes(page)).to_have_count(4)
    expect(box(page, "in2")).to_be_visible()
    expect(box(page, "filter2")).to_be_visible()
    expect(page.locator("#drawflow svg.connection")).to_have_count(2)
    box(page, "filter2").click()
    expect(page.locator(".properties .port")).to_contain_text("in2")
    expect(page.locator(".properties").get_by_label("where (required)", exact=True)).to_have_value(
        "price > 7"
    )
    screenshot(page, "editor-pasted")
    box(page, "in2").click(modifiers=["Shift"])
    expect(page.locator("#drawflow .drawflow-node.picked")).to_have_count(2)
    page.keyboard.press("Delete")
    expect(boxes(page)).to_have_count(2)
    expect(box(page, "filter2")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(boxes(page)).to_have_count(4)


def test_export_then_import_gives_the_same_document(login, live, stored, tmp_path):
    document = wide("shipped")
    name = stored(document)
    page = login("al")
    open_diagram(page, name)
    with page.expect_download() as download:
        toolbar(page, "Export").click()
    exported = json.loads(download.value.path().read_text())
    assert download.value.suggested_filename == f"{name}.json"
    assert exported == live.api("al", "GET", f"/diagrams/{name}").json()["document"]

    toolbar(page, "New").click()
    expect(boxes(page)).to_have_count(0)
    copy = tmp_path / "shipped.json"
    copy.write_text(json.dumps(exported))
    page.locator('#page-editor input[type="file"]').set_input_files(copy)
    expect(editor_notice(page)).to_have_text("Imported shipped.json; Save stores it.")
    expect(boxes(page)).to_have_count(5)
    expect(page.get_by_label("Diagram name")).to_have_value(name)
    with page.expect_download() as again:
        toolbar(page, "Export").click()
    assert json.loads(again.value.path().read_text()) == exported

    page.locator('#page-editor input[type="file"]').set_input_files(
        {"name": "junk.json", "mimeType": "application/json", "buffer": b"{not json"}
    )
    expect(editor_notice(page)).to_have_text("junk.json is not a JSON diagram document.")


def test_what_the_canvas_does_not_draw_is_kept_and_real_time_is_a_toggle(login, live, stored):
    """A document's description and real-time choice survive opening and saving it in the
    editor (it used to write back only what it drew); the toggle asks for real-time mode, and
    a deployed diagram's output box says how it runs and why."""
    name = stored({**filtered("settled"), "description": "kept as written", "realtime": True})
    page = login("al")
    open_diagram(page, name)
    realtime = page.locator("#page-editor").get_by_label("Real-time")
    expect(realtime).to_be_checked()
    set_field(page, "cheap", "where (required)", "price > 2")
    toolbar(page, "Deploy").click()  # saves the edit first
    expect(editor_notice(page)).to_have_text(f"{name} is running.")
    saved = live.api("al", "GET", f"/diagrams/{name}").json()["document"]
    assert (saved["description"], saved["realtime"], where_of(live, name)) == (
        "kept as written",
        True,
        "price > 2",
    )
    mode = box(page, f"{name}_out").locator(".box-mode")
    expect(mode).to_have_text(REAL_TIME)
    expect(mode).to_have_attribute("title", "1 of 1 real-time slots")  # 2 cores: 1 for it

    toolbar(page, "Stop").click()
    expect(editor_notice(page)).to_have_text(f"{name} is stopped.")
    realtime.uncheck()
    toolbar(page, "Save").click()
    expect(editor_notice(page)).to_have_text(f"Updated {name}.")
    saved = live.api("al", "GET", f"/diagrams/{name}").json()["document"]
    assert "realtime" not in saved and saved["description"] == "kept as written"
