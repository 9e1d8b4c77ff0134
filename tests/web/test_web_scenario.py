"""The Borealis paper's scenario (section 4.1) in three browsers: Al builds and runs q1, Bob
sees only what derives from in1 alone, and Joe's revocation stops Bob's results at once while
Al's keep coming. Its screenshots are the README's (``make screenshots``)."""

from playwright.sync_api import expect

from tests.web.conftest import screenshot
from tests.web.steps import (
    Feed,
    admin_permissions,
    box,
    build_q1,
    catalog_object,
    confirm,
    grant,
    open_results,
    result_rows,
)


def test_paper_scenario(login, live):
    al = login("al")
    build_q1(al)
    al.get_by_role("button", name="Deploy").click()
    expect(al.locator("#page-editor .toolbar .notice")).to_have_text("q1 is running.")
    expect(al.locator('.diagram-list li[data-diagram="q1"] .status')).to_have_text("running")

    open_results(al, "out1")
    feed = Feed(live)
    first = feed.tick()
    second = feed.tick()  # its event time closes the first window
    expect(result_rows(al, first)).to_have_count(4)
    sources = result_rows(al, first).locator("td.sources").all_inner_texts()
    assert sorted(sources) == ["in1", "in1", "in1, in2", "in2"]

    # In a second window, Al's editor shows the rows through each box of q1, and a preview.
    editor = login("al")
    editor.locator('.diagram-list li[data-diagram="q1"]').get_by_role("button", name="q1").click()
    expect(box(editor, "merged").locator(".box-metrics")).to_have_text("in 10 · out 10")
    expect(box(editor, "avg").locator(".box-metrics")).to_have_text("in 10 · out 4")
    box(editor, "avg").click()
    screenshot(editor, "editor", docs=True)
    preview = editor.get_by_role("region", name="Data preview of avg")
    preview.get_by_role("button", name="Preview data").click()
    expect(preview.locator("tbody tr").first).to_be_visible()
    preview.locator("table").first.scroll_into_view_if_needed()
    screenshot(editor, "preview", docs=True)

    # Bob has no permission yet: his catalog is empty and there is nothing to subscribe to.
    bob = login("bob")
    bob.get_by_role("link", name="Catalog").click()
    expect(bob.locator("table.objects tbody tr")).to_have_count(0)
    bob.get_by_role("link", name="Live results").click()
    expect(
        bob.locator("#page-results").get_by_label("Output", exact=True).locator("option")
    ).to_have_count(0)

    # Joe grants CUSTOMER2 the schema and in1; Al, as the owner of out1, grants it to CUSTOMER2.
    joe = login("joe")
    permissions = admin_permissions(joe)
    for action, label in (
        ("VIEW_OBJECT", "schema s"),
        ("VIEW_OBJECT", "stream in1"),
        ("READ_TUPLE", "stream in1"),
    ):
        grant(permissions, "CUSTOMER2", action, label)
    out1 = catalog_object(al, "output", "out1")
    for action in ("VIEW_OBJECT", "SUBSCRIBE"):
        grant(out1, "CUSTOMER2", action)

    # Bob's open page learns of the grant by itself, and his catalog now shows s, in1 and out1.
    options = bob.locator("#page-results").get_by_label("Output", exact=True).locator("option")
    expect(options).to_have_text(["out1"])
    bob.get_by_role("link", name="Catalog").click()
    expect(bob.locator("table.objects tbody tr")).to_have_count(3)
    assert sorted(
        bob.locator("table.objects tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.object)"
        )
    ) == ["output/out1", "schema/s", "stream/in1"]

    # The second window is still open; it closes after Bob subscribed, so he gets its {in1} rows.
    open_results(bob, "out1")
    third = feed.tick()
    expect(result_rows(al, second)).to_have_count(4)
    al.get_by_role("link", name="Live results").click()  # back from the catalog
    expect(al.locator("#page-results .results-chart .u-legend")).to_be_visible()
    screenshot(al, "results", docs=True)  # two windows: the chart has lines
    expect(result_rows(bob, second)).to_have_count(2)
    assert set(result_rows(bob).locator("td.sources").all_inner_texts()) == {"in1"}

    # Joe revokes READ_TUPLE on in1 from CUSTOMER2: Bob's pane stops, Al's goes on.
    joe.get_by_role("button", name="Revoke READ_TUPLE on stream in1 from CUSTOMER2").click()
    confirm(joe, "Revoke")
    expect(permissions.locator(".notice.ok")).to_have_text(
        "Revoked READ_TUPLE on in1 from CUSTOMER2."
    )
    screenshot(joe, "admin", docs=True)
    bob_rows = result_rows(bob).count()
    fourth = feed.tick()  # the third window, open at the revocation, closes after it ...
    feed.tick()
    # ... and the fourth closes in a later batch: once Al has that one, Bob's copy of the
    # third would have arrived too.
    expect(result_rows(al, fourth)).to_have_count(4)
    expect(result_rows(al, third)).to_have_count(4)
    expect(result_rows(bob, third)).to_have_count(0)
    expect(result_rows(bob)).to_have_count(bob_rows)
