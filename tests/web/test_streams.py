"""Streams and test data from the browser (issue 19): an administrator adds a schema and a
stream, a sender uploads a CSV file into it and its tuples come out of a diagram; a bad file is
refused with the server's words, naming the line or the tuple and field."""

import datetime as dt

from playwright.sync_api import expect

from tests.server.serverkit import wait_until

SCHEMA_FIELDS = "time timestamp\nsymbol string\nprice double"


def streams_page(page):
    page.get_by_role("link", name="Streams").click()
    return page.locator("#page-streams")


def submit(pane, form: str, button: str) -> None:
    pane.get_by_role("form", name=form).get_by_role("button", name=button).click()


def test_a_csv_file_uploaded_in_the_browser_reaches_a_diagram(login, live, tmp_path):
    joe = login("joe")
    pane = streams_page(joe)
    schema = pane.get_by_role("form", name="Add a schema")
    schema.get_by_label("Schema name").fill("uploads")
    schema.get_by_label("Fields").fill(SCHEMA_FIELDS)
    schema.get_by_label("Event-time field").fill("time")
    submit(pane, "Add a schema", "Add schema")
    expect(pane.get_by_role("status")).to_have_text("Added schema uploads.")
    stream = pane.get_by_role("form", name="Add a stream")
    stream.get_by_label("Stream name").fill("uploaded")
    stream.get_by_label("Of schema").select_option("uploads")
    submit(pane, "Add a stream", "Add stream")
    expect(pane.get_by_role("status")).to_have_text("Added stream uploaded.")

    doc = {
        "version": 1,
        "name": "q_upload",
        "inputs": {"uploaded": {}},
        "boxes": {"cheap": {"type": "filter", "in": "uploaded", "where": "price < 10"}},
        "outputs": {"out_upload": {"from": "cheap"}},
    }
    live.api("joe", "PUT", "/permissions/box_type/filter/ADMIN/USE")
    live.api("joe", "POST", "/diagrams", json={"document": doc})
    live.api("joe", "POST", "/diagrams/q_upload/deploy")
    try:
        start = dt.datetime(2032, 1, 1, tzinfo=dt.timezone.utc)
        rows = [(start + dt.timedelta(seconds=i), f"S{i}", float(i * 5)) for i in range(4)]
        good = tmp_path / "prices.csv"
        good.write_text(
            "time,symbol,price\n" + "".join(f"{t.isoformat()},{s},{p}\n" for t, s, p in rows)
        )
        send = pane.get_by_role("form", name="Send test data")
        send.get_by_label("Into stream").select_option("uploaded")
        send.get_by_label("File").set_input_files(str(good))
        submit(pane, "Send test data", "Send")
        expect(pane.get_by_role("status")).to_have_text(
            "Stored 4 tuples from prices.csv in uploaded."
        )

        bad = tmp_path / "bad.csv"
        bad.write_text(f"time,symbol,price\n{start.isoformat()},X,cheap\n")
        send.get_by_label("File").set_input_files(str(bad))
        submit(pane, "Send test data", "Send")
        expect(pane.get_by_role("status")).to_contain_text(
            "(tuple 0 field 'price': expected a finite number, got 'cheap')"
        )

        def results() -> list[str]:
            read = live.api("joe", "GET", "/outputs/out_upload/results?from=0").json()
            return sorted(t["symbol"] for t in read["tuples"])

        assert wait_until(lambda: results() == ["S0", "S1"], 120, "the uploaded tuples' results")
    finally:
        live.api("joe", "POST", "/diagrams/q_upload/stop")
        live.api("joe", "DELETE", "/diagrams/q_upload")
