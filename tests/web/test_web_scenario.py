"""The Borealis paper's scenario (section 4.1) in three browsers: Al builds and runs q1, Bob
sees only what derives from in1 alone, and Joe's revocation stops Bob's results at once."""
from playwright.sync_api import expect

from tests.web.conftest import screenshot
from tests.web.steps import HOSTILE, Feed, build_q1, open_results, result_rows


def test_al_builds_q1_and_watches_its_results(login, live):
    al = login("al")
    build_q1(al)
    al.get_by_role("button", name="Deploy").click()
    expect(al.locator("#page-editor .toolbar .notice")).to_have_text("q1 is running.")
    expect(al.locator('.diagram-list li[data-diagram="q1"] .status')).to_have_text("running")
    screenshot(al, "editor")

    open_results(al, "out1")
    feed = Feed(live)
    first = feed.tick()
    feed.tick()   # its event time closes the first window
    expect(result_rows(al, first)).to_have_count(4)
    sources = result_rows(al, first).locator("td.sources").all_inner_texts()
    assert sorted(sources) == ["in1", "in1", "in1, in2", "in2"]
    screenshot(al, "results")
