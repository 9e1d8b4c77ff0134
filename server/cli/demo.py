"""``sluice serve --demo``: the paper's scenario, live, within a minute of starting.

Seeds the catalog as in the paper's Figure 8 (Joe, Ed, Al, Bob and their roles, schema ``s``,
streams ``in1`` and ``in2``, Joe's grants), deploys ``q1`` (union -> 10 s average per symbol)
as Al, and starts two feeds that send New York (``in1``) and London (``in2``) prices as Ed
through the real ingestion path: WRITE checked, limits applied, durable append. The demo
passwords are generated once and kept in ``demo_logins.json`` (mode 0600) in the data
directory, so a restarted demo prints the same logins.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import random
import threading
from datetime import datetime, timezone

from boxes import codes
from boxes.errors import Conflict, Unauthenticated
from catalog import ObjectType
from catalog.bootstrap import seed_demo
from server.control.diagrams import open_logs, plan_for, run_named, spec_of
from server.ingest.admission import ingest

log = logging.getLogger(__name__)
LOGINS = "demo_logins.json"
Q1 = {
    "version": 1,
    "name": "q1",
    "description": "the paper's q1: average price per symbol",
    "inputs": {"in1": {}, "in2": {}},
    "boxes": {
        "merged": {"type": "union", "in": ["in1", "in2"]},
        "avg": {
            "type": "aggregate",
            "in": "merged",
            "window": {"size": "10s", "slide": "10s"},
            "group_by": ["symbol"],
            "aggregates": {"avg_price": "avg(price)", "n": "count()"},
        },
    },
    "outputs": {"out1": {"from": "avg"}},
}
# Stock prices by exchange; XOM trades in both places, so its averages carry {in1, in2}.
MARKETS = {
    "in1": {"IBM": 140.0, "AAPL": 190.0, "XOM": 105.0},
    "in2": {"BP": 4.8, "HSBA": 6.5, "XOM": 104.0},
}
PERIOD = 0.5


def _logins(svc) -> dict[str, str]:
    path = svc.settings.data_dir / LOGINS
    if not svc.catalog.core.snapshot.users:
        passwords = seed_demo(svc.catalog)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(passwords, out)
        return passwords
    if not path.exists():
        raise Conflict(
            "--demo needs an empty data directory (or one a demo seeded)", code=codes.NOT_EMPTY
        )
    return json.loads(path.read_text())


def _deploy_q1(svc, password: str) -> None:
    cat = svc.catalog
    _, al = cat.sessions.login("al", password)
    if cat.core.snapshot.find(ObjectType.DIAGRAM, "q1") is None:
        cat.objects.add_diagram(al, spec_of(plan_for(cat, al, Q1, svc.limits.cost_ceilings()), Q1))
    if cat.objects.get(al, ObjectType.DIAGRAM, "q1").status != "running":
        cat.objects.set_query_status(al, "q1", "running")
        run_named(svc, "q1")
    cat.sessions.logout(al)


class Feeds:
    """Ed's two price feeds, one batch per stream every PERIOD seconds, in one thread."""

    def __init__(self, svc, password: str) -> None:
        self.svc, self.password = svc, password
        self.prices = {stream: dict(quotes) for stream, quotes in MARKETS.items()}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-feeds", daemon=True)

    def _batch(self, stream: str) -> list[dict]:
        now = datetime.now(timezone.utc).isoformat()
        quotes = self.prices[stream]
        for symbol, price in quotes.items():
            quotes[symbol] = round(max(0.01, price * (1 + random.gauss(0, 0.002))), 4)
        return [{"time": now, "symbol": s, "price": p} for s, p in quotes.items()]

    def _run(self) -> None:
        ed = self.svc.catalog.sessions.login("ed", self.password)[1]
        while not self._stop.wait(PERIOD):
            try:
                for stream in MARKETS:
                    self.svc.catalog.authorize(ed, "streams.append", {"name": stream})
                    ingest(self.svc, ed, stream, functools.partial(self._batch, stream))
            except Unauthenticated:
                ed = self.svc.catalog.sessions.login("ed", self.password)[1]
            except Exception:
                log.exception("demo feed failed; retrying")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def start_demo(svc) -> dict[str, str]:
    """Seed (once), deploy q1 as Al, start Ed's feeds; return the demo logins."""
    passwords = _logins(svc)
    open_logs(svc)
    _deploy_q1(svc, passwords["al"])
    feeds = Feeds(svc, passwords["ed"])
    feeds.start()
    svc.on_close.append(feeds.stop)
    return passwords
