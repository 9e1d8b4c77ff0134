"""The README's walkthrough, step by step as it is written, in Chromium against the demo as
``make run`` starts it (``start_demo``: its seeds, its deployed diagrams and Ed's live feeds),
on the suite's SparkSession: al, bob (with joe's and al's grants and joe's revoke), pat and
sam, dora and nina, and cora behind the Chinese Wall. The tests share the one server and run in
the README's order; the Levels tab's picture is the README's (``make screenshots``)."""

from __future__ import annotations

import logging
import re
import threading
import time

import pytest
from playwright.sync_api import Page, expect
from werkzeug.serving import make_server

from server.app import close_app, create_app
from server.cli import level_demo, port_demo
from server.cli.demo import start_demo
from server.control.diagrams import start_runtime
from server.runtime import Runtime, RuntimeSettings
from tests.web.conftest import VIEWPORT, screenshot
from tests.web.steps import admin_permissions, admin_tab, box, catalog_object, confirm, grant

# Seconds: the health policy turns every 20 s, a full round is a minute; and a first result of
# a diagram, or a preview, may take a while on a busy machine.
PATIENCE = 150.0


class Demo:
    """The demo server's address and the logins ``make run`` prints."""

    def __init__(self, url: str, logins: dict[str, str]) -> None:
        self.url, self.logins = url, logins


@pytest.fixture(scope="module")
def demo(spark, tmp_path_factory):
    data = tmp_path_factory.mktemp("walkthrough")
    app = create_app({"data_dir": str(data), "testing": True, "runtime": False, "bcrypt_rounds": 4})
    svc = app.extensions["sluice"]
    # as `sluice serve --demo` starts it, on the suite's SparkSession (box metrics: the demo's)
    runtime = Runtime(data / "runtime", settings=RuntimeSettings(box_metrics=True), session=spark)
    start_runtime(svc, runtime)
    logins = start_demo(svc)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="walkthrough", daemon=True)
    thread.start()
    yield Demo(f"http://127.0.0.1:{server.server_port}", logins)
    server.shutdown()
    close_app(app)


@pytest.fixture(scope="module")
def window(browser, demo):
    """window("al") -> a browser window of al's, logged in as the README says; one per person
    for the whole walkthrough, as a reader keeps them open."""
    opened: dict[str, Page] = {}

    def open_as(user: str) -> Page:
        if user not in opened:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.goto(demo.url)
            page.get_by_label("User name").fill(user)
            page.get_by_label("Password").fill(demo.logins[user])
            page.get_by_role("button", name="Log in").click()
            expect(page.locator("#whoami .user")).to_have_text(user)
            opened[user] = page
        return opened[user]

    yield open_as
    for page in opened.values():
        page.context.close()


def subscribe(page: Page, output: str) -> None:
    """Click Live results, choose the Output and click Subscribe."""
    page.get_by_role("link", name="Live results").click()
    pane = page.locator("#page-results")
    pane.get_by_label("Output", exact=True).select_option(output)
    pane.get_by_role("button", name="Subscribe", exact=True).click()
    expect(pane.locator(".notice")).to_contain_text(f"Subscribed to {output}")


def rows(page: Page) -> list[dict[str, str]]:
    """The live results table's rows, each by its column headings."""
    return page.evaluate(
        """() => {
          const names = [...document.querySelectorAll('#page-results table.tuples thead th')]
            .map((th) => th.textContent);
          return [...document.querySelectorAll('#page-results table.tuples tbody tr')]
            .map((tr) => Object.fromEntries(
              [...tr.cells].map((td, i) => [names[i], td.textContent])));
        }"""
    )


def counted(page: Page) -> int:
    """How many rows the page has received (its counter, "N tuples")."""
    return int(page.locator("#page-results .counter").inner_text().split()[0])


def arrived(page: Page, more_than: int) -> None:
    """Wait for the page's counter to pass ``more_than``."""
    page.wait_for_function(
        "n => parseInt(document.querySelector('#page-results .counter').textContent) > n",
        arg=more_than,
        timeout=PATIENCE * 1000,
    )


def test_al_runs_q1(window):
    al = window("al")
    q1 = al.locator('.diagram-list li[data-diagram="q1"]')
    expect(q1.locator(".status")).to_have_text("running")
    q1.get_by_role("button", name="q1").click()
    for name in ("in1", "in2", "merged", "avg", "out1"):
        expect(box(al, name)).to_be_visible()
    metrics = re.compile(r"^in [\d,]+ · out [\d,]+$")
    expect(box(al, "merged").locator(".box-metrics")).to_have_text(metrics)
    expect(box(al, "avg").locator(".box-metrics")).to_have_text(metrics)

    subscribe(al, "out1")
    expected = {"IBM": "in1", "AAPL": "in1", "BP": "in2", "HSBA": "in2", "XOM": "in1, in2"}
    arrived(al, len(expected) * 2 - 1)  # two windows
    assert {r["symbol"]: r["sources"] for r in rows(al)} == expected
    expect(al.locator("#page-results .results-chart .u-legend")).to_be_visible()


def test_bob_reads_what_derives_from_in1_alone_until_joe_revokes_it(window):
    bob = window("bob")
    bob.get_by_role("link", name="Catalog").click()
    expect(bob.locator("table.objects tbody tr")).to_have_count(0)
    bob.get_by_role("link", name="Live results").click()
    outputs = bob.locator("#page-results").get_by_label("Output", exact=True).locator("option")
    expect(outputs).to_have_count(0)

    joe = window("joe")
    permissions = admin_permissions(joe)  # Admin, then the tab Permissions
    for action, object_ in (
        ("VIEW_OBJECT", "schema s"),
        ("VIEW_OBJECT", "stream in1"),
        ("READ_TUPLE", "stream in1"),
    ):
        grant(permissions, "CUSTOMER2", action, object_)
    # joe's grant on al's out1 is refused: an object is shared by its owner
    form = permissions.get_by_role("form", name="Grant a permission")
    form.get_by_label("Object").select_option(label="output out1")
    form.get_by_label("Role").fill("CUSTOMER2")
    form.get_by_label("Action").select_option("SUBSCRIBE")
    form.get_by_role("button", name="Grant").click()
    expect(permissions.locator('.notice.error[role="status"]')).to_contain_text(
        "needs CHANGE_PERM on output out1"
    )

    al = window("al")
    out1 = catalog_object(al, "output", "out1")  # Catalog, then out1
    for action in ("VIEW_OBJECT", "SUBSCRIBE"):
        grant(out1, "CUSTOMER2", action)

    expect(outputs).to_have_text(["out1"])  # bob's open page learnt of the grant by itself
    subscribe(bob, "out1")
    arrived(bob, 0)
    seen = rows(bob)
    assert {r["sources"] for r in seen} == {"in1"}
    assert {r["symbol"] for r in seen} <= {"IBM", "AAPL"}

    joe.get_by_role("button", name="Revoke READ_TUPLE on stream in1 from CUSTOMER2").click()
    confirm(joe, "Revoke")
    expect(permissions.locator(".notice.ok")).to_have_text(
        "Revoked READ_TUPLE on in1 from CUSTOMER2."
    )
    # A batch on its way as the revoke landed may still come; after al's next window none may.
    subscribe(al, "out1")
    arrived(al, 0)
    stopped = counted(bob)
    arrived(al, counted(al))
    arrived(al, counted(al))
    assert counted(bob) == stopped


def test_pat_and_sam_each_see_their_ships_on_one_diagram(window):
    pat, sam = window("pat"), window("sam")
    subscribe(pat, "ships")
    subscribe(sam, "ships")
    ships = {}
    for person, page in (("pat", pat), ("sam", sam)):
        expect(page.locator("#page-results .results-map")).to_be_visible()
        ships_table = page.locator("#page-results .map-ships tbody tr")
        expect(ships_table.first).to_be_attached(timeout=PATIENCE * 1000)
        expect(page.locator(".map-area path.ship-track").first).to_be_attached()
        ships[person] = rows(page)
    water = port_demo.PORT_WATERS
    for ship in ships["pat"]:  # in the port's waters, and nowhere else
        assert water["south"] <= float(ship["lat"]) <= water["north"], ship
        assert water["west"] <= float(ship["lon"]) <= water["east"], ship
    _, fleet = port_demo.fleet()
    assert {int(ship["mmsi"]) for ship in ships["sam"]} <= set(fleet)
    expect(pat.locator(".map-area path.port-area")).to_have_count(1)
    expect(sam.locator(".map-area path.port-area")).to_have_count(0)


def test_nina_stops_while_dora_goes_on_and_comes_back_with_the_ward_round(window):
    dora, nina = window("dora"), window("nina")
    subscribe(dora, "vital_signs")
    subscribe(nina, "vital_signs")
    arrived(dora, 0)
    # Doctors only: nina's count stays while dora's grows by two batches (4 patients, 2 vitals).
    deadline = time.monotonic() + PATIENCE
    since = (counted(dora), counted(nina))
    while True:  # poll: the policy turns every 20 s
        now = (counted(dora), counted(nina))
        if now[1] != since[1]:
            since = now
        elif now[0] >= since[0] + 16:
            break
        assert time.monotonic() < deadline, "nina's table never stopped while dora's went on"
        dora.wait_for_timeout(500)
    arrived(nina, counted(nina))  # the next ward round


def test_cora_reads_behind_the_chinese_wall(window):
    joe = window("joe")
    levels = admin_tab(joe, "Levels")
    classes = levels.get_by_role("table", name="Classes and their companies")
    for coi, companies in level_demo.CLASSES.items():
        for company in companies:
            expect(classes.locator("tr", has_text=coi)).to_contain_text(company)
    streams = levels.get_by_role("table", name="Streams with a company")
    expect(streams.locator("tr", has_text="advice")).to_contain_text("multilevel")
    clearances = levels.get_by_role("table", name="Clearances")
    expect(clearances.locator("tr", has_text="CONSULTANT")).to_contain_text("banks: A, oil: X")
    screenshot(joe, "levels", docs=True)

    cora = window("cora")
    subscribe(cora, "advice_ax")
    tuples = cora.locator("#page-results table.tuples tbody tr")
    expect(tuples.filter(has_text="public").first).to_be_visible(timeout=PATIENCE * 1000)
    expect(tuples.filter(has_text="banks: A").first).to_be_visible()
    expect(tuples.filter(has_text="oil: X").first).to_be_visible()
    seen = rows(cora)
    assert {r["level"] for r in seen} == {"banks: A", "oil: X", "public"}
    assert {r["company"] for r in seen} == {"A", "X", "market"}  # never B or Y
