"""The editor's query tab (issue 14): CQL typed there becomes boxes and arrows on the canvas, and
deploying that diagram delivers results; a bad query shows its problems at their line and column;
a diagram drawn on the canvas shows as its CQL, or the server's reason why it has none."""

from __future__ import annotations

import datetime as dt

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import screenshot
from tests.web.steps import (
    arrow,
    box,
    drop,
    editor_notice,
    open_results,
    rename,
    result_rows,
    set_field,
    watch_scripts,
)

QUERY = """CREATE DIAGRAM cqlweb;
INSERT INTO cqlweb_out
SELECT symbol, price * 2 AS doubled
FROM in1
WHERE price > 10"""


@pytest.fixture
def dropped(live):
    """The names of diagrams a test stores as al, stopped and dropped afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        live.call("al", "POST", f"/diagrams/{name}/stop")
        live.call("al", "DELETE", f"/diagrams/{name}")


def tab(page: Page, name: str):
    return page.locator("#page-editor").get_by_role("tab", name=name, exact=True)


def query_text(page: Page):
    return page.locator("#page-editor").get_by_label("CQL query")


def query_notice(page: Page):
    return page.locator("#page-editor .query-tab .notice")


def draw(page: Page, cql: str) -> None:
    tab(page, "Query").click()
    query_text(page).fill(cql)
    page.get_by_role("button", name="Draw on canvas").click()


def test_a_typed_query_becomes_boxes_and_arrows_and_its_deployment_delivers(login, live, dropped):
    page = login("al")
    scripts = watch_scripts(page)
    draw(page, QUERY)
    dropped.append("cqlweb")
    expect(editor_notice(page)).to_have_text(
        "Drew cqlweb from its query (4 boxes); Save or Deploy stores it."
    )
    expect(page.locator("#drawflow")).to_be_visible()
    expect(page.get_by_label("Diagram name")).to_have_value("cqlweb")
    names = ["in1", "cqlweb_out_where", "cqlweb_out_select", "cqlweb_out"]
    for name in names:
        expect(box(page, name)).to_be_visible()
    # laid out left to right by depth, one arrow into each box after the input
    lefts = [box(page, name).bounding_box()["x"] for name in names]
    assert lefts == sorted(lefts) and len(set(lefts)) == 4, lefts
    expect(page.locator("#drawflow .connection")).to_have_count(3)

    page.locator("#page-editor").get_by_role("button", name="Deploy", exact=True).click()
    expect(editor_notice(page)).to_have_text("cqlweb is running.")
    stored = live.api("al", "GET", "/diagrams/cqlweb").json()["document"]
    assert stored["boxes"]["cqlweb_out_where"] == {
        "type": "filter",
        "in": "in1",
        "where": "price > 10",
    }

    open_results(page, "cqlweb_out")
    at = dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc).isoformat()
    tuples = [{"time": at, "symbol": s, "price": p} for s, p in (("A", 5.0), ("QX", 21.5))]
    live.api("ed", "POST", "/streams/in1/tuples", json=tuples)
    rows = result_rows(page).filter(has_text="QX")
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("43")
    expect(result_rows(page).filter(has_text="A")).to_have_count(0)
    assert scripts == []


@pytest.mark.parametrize(
    ("cql", "code", "where"),
    [
        ("SELECT symbol\nFRM in1", "CQL_SYNTAX", "line 2, column 1"),
        ("SELECT avg(symbol) AS a\nFROM in1 [ROWS 5]", "TYPE_MISMATCH", "line 1, column 8"),
    ],
)
def test_a_bad_query_shows_its_problems_at_their_line_and_column(login, cql, code, where):
    page = login("al")
    draw(page, cql)
    expect(query_notice(page)).to_have_text("The query has 1 problem.")
    problem = page.locator(f'.query-tab .problems li[data-code="{code}"]')
    expect(problem).to_have_count(1)
    expect(problem.get_by_role("button")).to_have_text(where)
    # the canvas is left as it was, and the position puts the cursor where the problem is
    expect(page.locator("#drawflow .drawflow-node")).to_have_count(0)
    problem.get_by_role("button").click()
    line, column = (int(n) for n in where.replace("line ", "").split(", column "))
    before = "\n".join(cql.split("\n")[: line - 1] + [cql.split("\n")[line - 1][: column - 1]])
    expect(query_text(page)).to_be_focused()
    assert query_text(page).evaluate("t => t.selectionStart") == len(before)


def test_the_tab_shows_the_cql_of_a_drawn_diagram_a_shared_box_as_a_view(login):
    page = login("al")
    scripts = watch_scripts(page)
    tab(page, "Query").click()
    expect(query_notice(page)).to_have_text("The canvas is empty: type a query and draw it.")

    tab(page, "Diagram").click()
    page.get_by_label("Diagram name").fill("drawn")
    drop(page, "input", 15, 60)
    drop(page, "filter", 200, 60)
    drop(page, "output", 385, 60)
    rename(page, "output1", "drawn_out")
    arrow(page, "in1", "filter1")
    arrow(page, "filter1", "drawn_out")
    set_field(page, "filter1", "where (required)", "price > 1")
    tab(page, "Query").click()
    expect(query_notice(page)).to_have_text("The CQL of the diagram on the canvas.")
    screenshot(page, "query-tab")
    expect(query_text(page)).to_have_value(
        "CREATE DIAGRAM drawn;\nINSERT INTO drawn_out\nSELECT *\nFROM in1\nWHERE price > 1;\n"
    )

    # the printed CQL draws back as the same diagram, its boxes named after their clauses
    page.get_by_role("button", name="Draw on canvas").click()
    expect(box(page, "drawn_out_where")).to_be_visible()
    expect(page.locator("#drawflow .drawflow-node")).to_have_count(3)

    # a second output from the filter: the filter is a view, which both outputs read
    drop(page, "output", 385, 200)
    arrow(page, "drawn_out_where", "output1")
    tab(page, "Query").click()
    expect(query_notice(page)).to_have_text("The CQL of the diagram on the canvas.")
    expect(query_text(page)).to_have_value(
        "CREATE DIAGRAM drawn;\nCREATE VIEW drawn_out_where AS\nSELECT *\nFROM in1\n"
        "WHERE price > 1;\nINSERT INTO drawn_out\nSELECT *\nFROM drawn_out_where;\n"
        "INSERT INTO output1\nSELECT *\nFROM drawn_out_where;\n"
    )
    assert scripts == []


@pytest.mark.parametrize(
    "cql",
    [
        "CREATE DIAGRAM cqlrows;\nSELECT symbol, count(*) AS n, avg(price) AS p\n"
        "FROM in1 [PARTITION BY symbol ROWS 3] WHERE price > 1 GROUP BY symbol",
        "CREATE DIAGRAM cqlrange;\nSELECT symbol, max(price) AS top\n"
        "FROM in1 [RANGE 10s] GROUP BY symbol HAVING top > 5",
        "CREATE DIAGRAM cqlunion;\nSELECT * FROM in1 WHERE price > 1\nUNION\nSELECT * FROM in2",
    ],
)
def test_a_drawn_query_is_saved_as_the_document_it_compiles_to(login, live, dropped, cql):
    """What the canvas holds after drawing is exactly the compiled document: nothing the
    server compiled (a count window, a HAVING filter, a union's inputs) is lost on the way."""
    compiled = live.api("al", "POST", "/diagrams/validate", json={"cql": cql}).json()["document"]
    page = login("al")
    draw(page, cql)
    expect(editor_notice(page)).to_contain_text(f"Drew {compiled['name']} from its query")
    dropped.append(compiled["name"])
    page.locator("#page-editor").get_by_role("button", name="Save", exact=True).click()
    expect(editor_notice(page)).to_have_text(f"Saved {compiled['name']}.")
    stored = live.api("al", "GET", f"/diagrams/{compiled['name']}").json()["document"]
    assert stored == compiled
