"""The real server on a loopback port, with real Spark, and Debian's Chromium driven by Playwright.

One server serves the whole web session: the paper's world (joe ADMIN, ed INFO_PROVIDER, al
CUSTOMER1, bob CUSTOMER2; schema ``s``, streams ``in1`` and ``in2``) seeded into a fresh
catalog, the stream runtime sharing the suite's SparkSession. Each user gets a browser
context of their own, so their cookies and sockets are as separate as two people's.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Page, expect, sync_playwright
from werkzeug.serving import make_server

from catalog.bootstrap import seed_demo
from server.app import close_app, create_app
from server.control.diagrams import start_runtime
from server.runtime import Runtime, RuntimeSettings

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 800}
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# Spark needs a few micro-batches for a window to close; everything else answers at once.
expect.set_options(timeout=60_000)


class Live:
    """The running server: its address, the users' passwords, a bearer-token API client, and
    its services (``svc.runtime``: for a test that breaks what a diagram reads)."""

    def __init__(self, url: str, passwords: dict[str, str], svc=None) -> None:
        self.url = url
        self.passwords = passwords
        self.svc = svc
        self._tokens: dict[str, str] = {}

    def call(self, user: str, method: str, path: str, **kwargs) -> requests.Response:
        """The server's answer, whatever it is."""
        if user not in self._tokens:
            answer = requests.post(
                f"{self.url}/api/v1/auth/login",
                json={"user": user, "password": self.passwords[user]},
                timeout=30,
            )
            answer.raise_for_status()
            self._tokens[user] = answer.json()["token"]
        headers = {"Authorization": f"Bearer {self._tokens[user]}"}
        return requests.request(
            method, f"{self.url}/api/v1{path}", headers=headers, timeout=60, **kwargs
        )

    def api(self, user: str, method: str, path: str, **kwargs) -> requests.Response:
        """The server's answer, which must be a success."""
        answer = self.call(user, method, path, **kwargs)
        assert answer.ok, answer.text
        return answer


@pytest.fixture(scope="session")
def live(spark, tmp_path_factory):
    data = tmp_path_factory.mktemp("web-server")
    app = create_app({"data_dir": str(data), "testing": True, "runtime": False, "bcrypt_rounds": 4})
    svc = app.extensions["sluice"]
    passwords = seed_demo(svc.catalog)
    # as the server starts it, but on the suite's SparkSession: logs for every input stream,
    # and administrators' limit changes reach the runtime
    runtime = Runtime(data / "runtime", settings=RuntimeSettings(box_metrics=True), session=spark)
    start_runtime(svc, runtime)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request is noise
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="web-test-server", daemon=True)
    thread.start()
    yield Live(f"http://127.0.0.1:{server.server_port}", passwords, svc)
    server.shutdown()
    close_app(app)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"the web tests drive Debian's Chromium at {CHROMIUM}: sudo apt-get install -y chromium"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def login(browser, live):
    """login("al") -> a Page in a fresh browser context, logged in as al at 1280x800."""
    contexts = []

    def open_as(user: str, roles: list[str] | None = None) -> Page:
        context = browser.new_context(viewport=VIEWPORT)
        contexts.append(context)
        page = context.new_page()
        page.goto(live.url)
        page.get_by_label("User name").fill(user)
        page.get_by_label("Password").fill(live.passwords[user])
        page.get_by_role("button", name="Log in").click()
        if roles is not None:
            for box in page.locator("fieldset.roles input").all():
                box.set_checked(box.get_attribute("value") in roles)
            page.get_by_role("button", name="Continue").click()
        expect(page.locator("#app")).to_be_visible()
        expect(page.locator("#whoami .user")).to_have_text(user)
        return page

    yield open_as
    for context in contexts:
        context.close()


def screenshot(page: Page, name: str, docs: bool = False) -> Path:
    """Save the page as tests/artifacts/NAME.png; one the README shows (``docs``) also goes to
    docs/screenshots/ when ``DOCS_SCREENSHOTS`` is set (``make screenshots``), so the
    README's pictures are always taken by the tests."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    if docs and os.environ.get("DOCS_SCREENSHOTS"):
        shutil.copyfile(path, DOCS_SCREENSHOTS / path.name)
    return path


@pytest.fixture
def stored(live):
    """stored(document) -> the diagram's name, created as al; dropped afterwards."""
    names = []

    def create(document: dict) -> str:
        live.api("al", "POST", "/diagrams", json={"document": document})
        names.append(document["name"])
        return document["name"]

    yield create
    for name in names:
        live.call("al", "POST", f"/diagrams/{name}/stop")
        live.call("al", "DELETE", f"/diagrams/{name}")
