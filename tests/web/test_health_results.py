"""The demo's health monitoring in Chromium (seed 003): the doctor and the nurse side by side
on the live results of ``vitals``; the provider's feed changes its policy to doctors only and
the nurse's table stops growing while the doctor's goes on."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from server.cli import health_demo
from server.cli.health_demo import OUTPUT, HealthFeed
from server.control.diagrams import open_logs
from tests.server.serverkit import wait_until
from tests.web.conftest import screenshot
from tests.web.steps import open_results

# Seconds per policy: a few micro-batches each, so one batch spans few policies; the test waits
# for three turns (doctors only, cardiac watch, the ward round again).
CYCLE = 5.0


@pytest.fixture(scope="module")
def health(live):
    """The demo's health part seeded into the shared server and ``vitals`` deployed; its feed
    (not started) with a short cycle. Everything goes again afterwards, so that later tests on
    this server see only their own objects."""
    health_demo.seed(live.svc, live.passwords, live.passwords.update)
    open_logs(live.svc)
    live.api("joe", "POST", "/diagrams/vitals/deploy")
    yield HealthFeed(live.svc, live.passwords["ed"], period=0.5, cycle=CYCLE)
    live.api("joe", "POST", "/diagrams/vitals/stop")
    live.api("joe", "DELETE", "/diagrams/vitals")
    for stream, schema in health_demo.STREAMS.items():
        live.api("joe", "DELETE", f"/streams/{stream}")
        live.api("joe", "DELETE", f"/schemas/{schema}")
    for user, role in health_demo.USERS.items():
        live.api("joe", "DELETE", f"/users/{user}")
        live.api("joe", "DELETE", f"/roles/{role}")
        del live.passwords[user]


def readings(feed: HealthFeed, page: Page) -> list[tuple[str, str]]:
    """(policy, vital) of each row of the page's results table, newest first."""
    rows = page.evaluate(
        """() => {
          const names = [...document.querySelectorAll('#page-results table.tuples thead th')]
            .map((th) => th.textContent);
          return [...document.querySelectorAll('#page-results table.tuples tbody tr')]
            .map((tr) => Object.fromEntries(
              [...tr.cells].map((td, i) => [names[i], td.textContent])));
        }"""
    )
    return [(feed.policy_at(row["time"])[1], row["vital"]) for row in rows]


def counted(page: Page) -> int:
    """How many rows the page has received (its table keeps the newest 200)."""
    return int(page.locator("#page-results .counter").inner_text().split()[0])


def grows(page: Page, what: str) -> None:
    """Wait for rows from a later batch than those on the page now."""
    more = counted(page) + 1
    wait_until(lambda: counted(page) >= more, 120, what)


def test_the_policy_change_stops_the_nurses_table_while_the_doctors_grows(login, health):
    feed = health
    doctor, nurse = login("dora"), login("nina")
    for page in (doctor, nurse):
        open_results(page, OUTPUT)
    feed.start()
    try:
        for page, role in ((doctor, "DOCTOR"), (nurse, "NURSE")):
            expect(page.locator("#page-results .policy")).to_have_text(
                f"Security policy of the arriving rows: readable by your roles {role}",
                timeout=150_000,
            )
        # the provider narrows its policy to doctors (and cardiologists): the doctor's table
        # shows the new policy's readings, then more of them (a later batch: everything the
        # nurse was sent under the old policy has reached her page by then)
        wait_until(
            lambda: ("doctors only", "heart rate") in readings(feed, doctor),
            120,
            "the doctor's readings under 'doctors only'",
        )
        grows(doctor, "more of the doctor's readings")
        stopped = counted(nurse)
        screenshot(doctor, "health-doctor")
        screenshot(nurse, "health-nurse")
        # the doctor's table goes on growing, through the next policy too; the nurse's does not
        wait_until(
            lambda: ("cardiac watch", "temperature") in readings(feed, doctor),
            120,
            "the doctor's readings under 'cardiac watch'",
        )
        grows(doctor, "more of the doctor's readings")
        assert counted(nurse) == stopped > 0
        assert {policy for policy, _ in readings(feed, nurse)} == {"ward round"}
        # under 'cardiac watch' the doctor reads temperatures only (heart rates: cardiologists)
        assert {v for p, v in readings(feed, doctor) if p == "cardiac watch"} == {"temperature"}
        # and with the next ward round the nurse's table grows again
        expect(nurse.locator("#page-results .counter")).not_to_have_text(
            f"{stopped} tuples", timeout=120_000
        )
        assert {policy for policy, _ in readings(feed, nurse)} == {"ward round"}
    finally:
        feed.stop()
