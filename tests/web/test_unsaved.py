"""Work on the canvas is not lost without asking (issue 39): New, opening another diagram,
logging out and closing the tab ask first when the canvas holds unsaved edits, and Ctrl+S
saves from inside a properties field (it used to open the browser's "Save page")."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.web.steps import box, confirm, editor_notice, set_field
from tests.web.test_editor import boxes, filtered, open_diagram, toolbar, where_of


def where_field(page: Page):
    return page.locator(".properties").get_by_label("where (required)", exact=True)


def test_new_and_opening_another_diagram_ask_before_discarding_edits(login, live, stored):
    first = stored(filtered("kept1"))
    second = stored(filtered("kept2"))
    page = login("al")
    open_diagram(page, first)
    toolbar(page, "New").click()  # nothing edited: no question
    expect(boxes(page)).to_have_count(0)

    open_diagram(page, first)
    set_field(page, "cheap", "where (required)", "price > 9")
    page.locator(f'.diagram-list li[data-diagram="{second}"]').get_by_role(
        "button", name=second
    ).click()
    confirm(page, "Cancel")
    expect(page.get_by_label("Diagram name")).to_have_value(first)
    box(page, "cheap").click()
    expect(where_field(page)).to_have_value("price > 9")

    toolbar(page, "New").click()
    expect(page.get_by_role("alertdialog")).to_contain_text(f"Diagram {first} has unsaved changes")
    confirm(page, "Discard")
    expect(boxes(page)).to_have_count(0)
    assert where_of(live, first) == "price > 1"


def test_logging_out_and_closing_the_tab_ask_before_discarding_edits(login):
    page = login("al")
    page.locator('.palette-item[data-type="filter"]').click()
    expect(boxes(page)).to_have_count(1)

    page.get_by_role("button", name="Log out").click()
    confirm(page, "Cancel")
    expect(page.locator("#whoami .user")).to_have_text("al")
    expect(boxes(page)).to_have_count(1)

    with page.expect_event("dialog") as asked:
        page.close(run_before_unload=True)
    assert asked.value.type == "beforeunload"
    asked.value.dismiss()  # stay on the page
    expect(boxes(page)).to_have_count(1)

    page.get_by_role("button", name="Log out").click()
    confirm(page, "Discard")
    expect(page.get_by_label("User name")).to_be_visible()


def test_ctrl_s_in_a_properties_field_saves_what_was_typed(login, live, stored):
    name = stored(filtered("typed"))
    page = login("al")
    open_diagram(page, name)
    box(page, "cheap").click()
    where_field(page).fill("price > 4")
    where_field(page).press("Control+s")
    expect(editor_notice(page)).to_have_text(f"Updated {name}.")
    assert where_of(live, name) == "price > 4"

    page.get_by_label("Diagram name").press("Control+s")  # the toolbar's field too
    expect(editor_notice(page)).to_have_text(f"Updated {name}.")
    toolbar(page, "New").click()  # saved: nothing to discard, no question
    expect(boxes(page)).to_have_count(0)


def test_ctrl_s_in_the_query_tab_draws_the_typed_query_then_saves_it(login, live):
    page = login("al")
    page.get_by_role("tab", name="Query").click()
    cql = page.get_by_label("CQL query")
    cql.fill("CREATE DIAGRAM typedq;\nINSERT INTO typedq_out\nSELECT *\nFROM in1\nWHERE price > 3")
    cql.press("Control+s")
    expect(editor_notice(page)).to_have_text("Saved typedq.")
    try:
        expect(boxes(page)).not_to_have_count(0)
        stored = live.api("al", "GET", "/diagrams/typedq").json()["document"]
        assert "price > 3" in str(stored)
    finally:
        live.call("al", "DELETE", "/diagrams/typedq")
