"""The server's validation errors land next to the field they concern: the filter's ``where``
input is marked invalid and described by the server's own message, in its own form group."""

import re

import pytest
from playwright.sync_api import expect

from tests.web.conftest import screenshot
from tests.web.steps import arrow, box, editor_notice, set_field


def document(where: str) -> dict:
    """What the editor below builds: in1 -> filter1 -> output1."""
    return {
        "version": 1,
        "name": "checked",
        "inputs": {"in1": {}},
        "boxes": {"filter1": {"type": "filter", "in": "in1", "where": where}},
        "outputs": {"output1": {"from": "filter1"}},
    }


@pytest.mark.parametrize(
    "where, code", [("nosuch > 1", "UNKNOWN_FIELD"), ("price + 1", "TYPE_MISMATCH")]
)
def test_a_predicate_error_shows_beside_the_predicate(login, live, where, code):
    answer = live.api("al", "POST", "/diagrams/validate", json={"document": document(where)}).json()
    [problem] = answer["problems"]
    assert (problem["code"], problem["path"]) == (code, "boxes.filter1.where")

    page = login("al")
    page.get_by_label("Diagram name").fill("checked")
    for box_type in ("input", "filter", "output"):
        page.locator(f'.palette-item[data-type="{box_type}"]').click()
    arrow(page, "in1", "filter1")
    arrow(page, "filter1", "output1")
    set_field(page, "filter1", "where (required)", where)
    page.get_by_role("button", name="Validate", exact=True).click()
    expect(editor_notice(page)).to_have_text("The diagram has 1 problem; see the marked box.")
    expect(box(page, "filter1")).to_have_class(re.compile(r"\bhas-problem\b"))

    field = page.locator(".properties").get_by_label("where (required)", exact=True)
    expect(field).to_have_attribute("aria-invalid", "true")
    error = page.locator(f"#{field.get_attribute('aria-errormessage')}")
    expect(error).to_have_text(problem["message"])
    expect(error).to_be_visible()
    assert field.get_attribute("aria-describedby").split()[0] == error.get_attribute("id")
    assert field.evaluate(
        "(f, e) => f.closest('.field') === e.closest('.field')", error.element_handle()
    )
    # the other fields of the box carry no error
    expect(page.locator(".properties .field-error:visible")).to_have_count(1)
    screenshot(page, f"validation-{code.lower()}")
