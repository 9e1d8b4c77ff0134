"""The admin console's Runtime tab: the Spark driver, the runtime lease and which diagrams share
one execution (issue 17: sharing is visible to an administrator)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.paper import q1
from tests.web.steps import admin_tab


def test_an_administrator_sees_which_diagrams_share_one_execution(login, live, stored):
    for name, where in (("qshare_a", None), ("qshare_b", "avg_price > 100")):
        doc = q1(outputs={})  # the same windows: one execution, each member's filter on top
        last = "avg"
        if where:
            doc["boxes"]["dear"] = {"type": "filter", "in": "avg", "where": where}
            last = "dear"
        doc["name"], doc["outputs"] = name, {f"{name}_out": {"from": last}}
        stored(doc)
        live.api("al", "POST", f"/diagrams/{name}/deploy")
    shared = live.api("joe", "GET", "/system/status").json()["runtime"]["shared"]
    (execution,) = [s for s in shared if {m["diagram"] for m in s["members"]} >= {"qshare_a"}]
    joe = login("joe")
    pane = admin_tab(joe, "Runtime")
    expect(pane.get_by_text("Spark driver: answering")).to_be_visible()
    expect(pane.get_by_text("Real-time slots: 0 of 1 in use.")).to_be_visible()  # 2 cores
    executions = pane.get_by_role("table", name="Diagrams that run as one execution")
    row = executions.get_by_role("row").filter(has_text=execution["key"])
    expect(row).to_contain_text("qshare_a (running), qshare_b (running) where avg_price > 100")
    expect(row).to_contain_text("prefix, 0 common conditions")  # counted rows split too
    live.api("al", "POST", "/diagrams/qshare_b/stop")
    pane.page.get_by_role("tab", name="Users").click()
    pane.page.get_by_role("tab", name="Runtime").click()  # shown again: read again
    expect(row).to_contain_text("qshare_a (running), qshare_b (stopped) where avg_price > 100")
