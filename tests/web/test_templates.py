"""Diagram templates (issue 19): starters offered beside New, their parameters filled from the
box declarations the server serves and the fields of streams the user may read. Each opens as a
new diagram that the server's validation route accepts; one is deployed and runs."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import screenshot
from tests.web.steps import editor_notice, watch_scripts

# template -> the boxes it draws (its inputs, its box, an output)
TEMPLATES = {"filter": 3, "windowed": 3, "join": 4, "union": 4, "counted": 3}


def open_template(page: Page, template: str) -> str:
    """Open a template from the editor's toolbar; return the diagram's name it was given."""
    page.locator("#page-editor").get_by_role("button", name="From template", exact=True).click()
    dialog = page.get_by_role("dialog", name="New from a template")
    expect(dialog).to_be_visible()
    dialog.locator(f'button[data-template="{template}"]').click()
    expect(dialog).to_have_count(0)
    expect(editor_notice(page)).to_contain_text("template as")
    return page.get_by_label("Diagram name").input_value()


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_template_opens_as_a_new_diagram_the_server_validates(login, template):
    page = login("al")
    scripts = watch_scripts(page)
    name = open_template(page, template)
    assert name == f"{template}1"
    expect(page.locator(".drawflow-node.box")).to_have_count(TEMPLATES[template])
    expect(page.locator(f'.drawflow-node[data-name="{name}_out"]')).to_be_visible()
    with page.expect_response(lambda r: r.url.endswith("/api/v1/diagrams/validate")) as answer:
        page.locator("#page-editor").get_by_role("button", name="Validate", exact=True).click()
    assert answer.value.json()["valid"] is True, answer.value.json()
    expect(editor_notice(page)).to_have_text("The diagram is valid.")
    assert scripts == []


def test_a_template_deploys_and_runs(login, live):
    page = login("al")
    name = open_template(page, "filter")
    try:
        page.locator("#page-editor").get_by_role("button", name="Deploy", exact=True).click()
        expect(editor_notice(page)).to_have_text(f"{name} is running.")
        row = page.locator(f'.diagram-list li[data-diagram="{name}"]')
        expect(row.locator(".status")).to_have_text("running")
        stored = live.api("al", "GET", f"/diagrams/{name}").json()
        assert stored["status"] == "running"
        doc = stored["document"]
        (stream,) = doc["inputs"]
        assert doc["boxes"]["filter1"]["in"] == stream
        assert doc["outputs"][f"{name}_out"]["from"] == "filter1"
    finally:
        live.call("al", "POST", f"/diagrams/{name}/stop")
        live.call("al", "DELETE", f"/diagrams/{name}")


def test_cancel_leaves_the_canvas_as_it_was(login):
    page = login("al")
    page.locator('.palette-item[data-type="filter"]').click()
    page.locator("#page-editor").get_by_role("button", name="From template", exact=True).click()
    dialog = page.get_by_role("dialog", name="New from a template")
    expect(dialog.locator("button.template:not([disabled])")).to_have_count(len(TEMPLATES))
    screenshot(page, "templates")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    expect(page.locator(".drawflow-node.box")).to_have_count(1)
