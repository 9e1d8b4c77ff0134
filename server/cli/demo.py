"""``sluice serve --demo``: the paper's scenario, live, within a minute of starting.

Seeds the catalog as in the paper's Figure 8 (Joe, Ed, Al, Bob and their roles, schema ``s``,
streams ``in1`` and ``in2``, Joe's grants), deploys ``q1`` (union -> 10 s average per symbol)
as Al, and starts two feeds that send New York (``in1``) and London (``in2``) prices as Ed
through the real ingestion path: WRITE checked, limits applied, durable append. Ed also sends
ship traffic in the Singapore Strait (seed 002, ``ais_demo.py``) as real ``!AIVDM`` sentences
to ``ais`` and ``voyages``, and the companies' feed to ``routes``; and vital signs
governed by security punctuations (seed 003, ``health_demo.py``) to ``HeartRate`` and
``BodyTemperature``, changing who may read them every 20 s. A port authority (``pat``) and a
ship company (``sam``) watch the strait under seed 002's policies (``port_demo.py``): one
diagram, ``strait``, each seeing the ships its policies allow. A consultant (``cora``) cleared
for bank A and oil company X runs ``advice_ax`` at that level over Ed's analysts' advice, behind
a Chinese Wall (seeds 000/001, ``level_demo.py``). The demo passwords are generated
once and kept in ``demo_logins.json`` (mode 0600) in the data directory, so a restarted demo
prints the same logins.
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
from catalog import Action, ObjectType
from catalog.bootstrap import seed_demo
from server.cli import health_demo, level_demo, port_demo
from server.cli.ais_demo import Traffic
from server.control.diagrams import open_logs, plan_for, run_named, spec_of
from server.ingest.admission import ingest
from server.ingest.here import here
from server.ingest.nmea import read_nmea

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
# Seed 002's streams: AIS positions and voyage data (decoded from NMEA) and the Route feed.
AIS_SCHEMAS = {
    "ais_position": {
        "fields": {
            "mmsi": "long",
            "lat": "double",
            "lon": "double",
            "sog": "double",
            "cog": "double",
            "heading": "long",
            "ts": "timestamp",
        },
        "event_time": "ts",
    },
    "ais_voyage": {
        "fields": {
            "mmsi": "long",
            "name": "string",
            "ship_type": "long",
            "destination": "string",
            "ts": "timestamp",
        },
        "event_time": "ts",
    },
    "route": {
        "fields": {
            "mmsi": "long",
            "company": "string",
            "next_leg": "string",
            "free_load": "long",
            "time": "timestamp",
        },
        "event_time": "time",
    },
}
AIS_STREAMS = {"ais": "ais_position", "voyages": "ais_voyage", "routes": "route"}
AIS_PERIOD, AIS_PACE = 1.0, 30.0  # a report a second, the ships sailing 30 times as fast
VOYAGES_EVERY, ROUTES_EVERY = 60, 10  # ticks between voyage data, and company updates (5 min)


def _logins(svc) -> dict[str, str]:
    path = svc.settings.data_dir / LOGINS
    if not svc.catalog.core.snapshot.users:
        passwords = seed_demo(svc.catalog)
        _keep(svc, passwords)
        return passwords
    if not path.exists():
        raise Conflict(
            "--demo needs an empty data directory (or one a demo seeded)", code=codes.NOT_EMPTY
        )
    return json.loads(path.read_text())


def _keep(svc, passwords: dict[str, str]) -> None:
    fd = os.open(svc.settings.data_dir / LOGINS, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(passwords, out)


def _deploy(svc, user: str, password: str, doc: dict) -> None:
    """``user`` adds diagram ``doc`` (once) and runs it unless it runs."""
    cat, name = svc.catalog, doc["name"]
    _, subject = cat.sessions.login(user, password)
    if cat.core.snapshot.find(ObjectType.DIAGRAM, name) is None:
        plan = plan_for(cat, subject, doc, svc.limits.cost_ceilings())
        cat.objects.add_diagram(subject, spec_of(plan, doc))
    if cat.objects.get(subject, ObjectType.DIAGRAM, name).status != "running":
        cat.objects.set_query_status(subject, name, "running")
        run_named(svc, name, subject)
    cat.sessions.logout(subject)


def _seed_ais(svc, password: str) -> None:
    """Joe adds the AIS schemas and streams (once), which Ed may write and Al may read."""
    cat = svc.catalog
    if cat.core.snapshot.find(ObjectType.STREAM, "ais") is not None:
        return
    _, joe = cat.sessions.login("joe", password)
    for name, schema in AIS_SCHEMAS.items():
        cat.objects.add_schema(joe, name, schema)
        for role in ("INFO_PROVIDER", "CUSTOMER1"):
            cat.grants.grant(joe, role, Action.VIEW_OBJECT, ObjectType.SCHEMA, name)
    for stream, schema_name in AIS_STREAMS.items():
        cat.objects.add_stream(joe, stream, schema_name)
        for role, actions in (
            ("INFO_PROVIDER", (Action.VIEW_OBJECT, Action.WRITE)),
            ("CUSTOMER1", (Action.VIEW_OBJECT, Action.READ_TUPLE)),
        ):
            for action in actions:
                cat.grants.grant(joe, role, action, ObjectType.STREAM, stream)
    cat.sessions.logout(joe)


class AisFeed:
    """Ed's strait traffic: position reports every AIS_PERIOD seconds as NMEA, voyage data
    and the companies' Route feed now and then, through the same ingestion as any client."""

    def __init__(self, svc, password: str) -> None:
        self.svc, self.password = svc, password
        self.traffic = Traffic(start=datetime.now(timezone.utc), pace=AIS_PACE)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-ais", daemon=True)

    def _send(self, ed, stream: str, read) -> None:
        self.svc.catalog.authorize(ed, "streams.append", {"name": stream})
        ingest(self.svc, ed, stream, read)

    def _nmea(self, stream: str, lines: list[str]):
        schema = here(self.svc).needed().log.schema(stream)
        return lambda: read_nmea("\n".join(lines).encode(), schema, stream)

    def _run(self) -> None:
        ed, ticks = self.svc.catalog.sessions.login("ed", self.password)[1], 0
        while not self._stop.wait(AIS_PERIOD):
            try:
                self._send(ed, "ais", self._nmea("ais", self.traffic.tick(int(AIS_PERIOD))))
                if ticks % VOYAGES_EVERY == 0:
                    self._send(ed, "voyages", self._nmea("voyages", self.traffic.voyages()))
                if ticks % ROUTES_EVERY == 0:
                    self._send(ed, "routes", self.traffic.route_updates)
                ticks += 1
            except Unauthenticated:
                ed = self.svc.catalog.sessions.login("ed", self.password)[1]
            except Exception:
                log.exception("demo AIS feed failed; retrying")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


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
    """Seed (once), deploy q1 as Al, vitals as Joe, strait as Pat and advice_ax as Cora, start
    Ed's feeds (prices, ships, vital signs and advice); return the logins."""
    passwords = _logins(svc)
    _seed_ais(svc, passwords["joe"])
    passwords = health_demo.seed(svc, passwords, functools.partial(_keep, svc))
    passwords = port_demo.seed(svc, passwords, functools.partial(_keep, svc))
    passwords = level_demo.seed(svc, passwords, functools.partial(_keep, svc))
    open_logs(svc)
    _deploy(svc, "al", passwords["al"], Q1)
    _deploy(svc, "joe", passwords["joe"], health_demo.VITALS)
    _deploy(svc, "pat", passwords["pat"], port_demo.STRAIT)
    port_demo.share(svc, passwords["pat"])
    _deploy(svc, "cora", passwords["cora"], level_demo.ADVICE)
    for feed in (
        Feeds(svc, passwords["ed"]),
        AisFeed(svc, passwords["ed"]),
        health_demo.HealthFeed(svc, passwords["ed"]),
        level_demo.AdviceFeed(svc, passwords["ed"]),
    ):
        feed.start()
        svc.on_close.append(feed.stop)
    return passwords
