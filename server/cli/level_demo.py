"""Seeds 000/001's Chinese Wall in the demo: analysts' advice behind a wall.

``seed`` adds (once) the conflict-of-interest classes ``banks`` (companies ``A`` and ``B``) and
``oil`` (``X`` and ``Y``), the multilevel stream ``advice`` on which each tuple states the level
of the company it is about, the role CONSULTANT cleared for bank A and oil company X with its
user ``cora``, and clears Ed's INFO_PROVIDER for every company (``T``), so that his feed may
send advice at any level. ``cora`` deploys ``advice_ax``, a diagram at level [banks: A, oil:
X]: its input sees only A's, X's and public advice (never B's or Y's, the companies competing
with them), and its results carry their level (docs/levels.md). ``AdviceFeed`` sends, as Ed,
a piece of advice per company and a public one every PERIOD seconds.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from datetime import datetime, timezone

from boxes.errors import Unauthenticated
from catalog import Action, ObjectType
from catalog.bootstrap import add_demo_people
from server.ingest.admission import ingest

log = logging.getLogger(__name__)
CLASSES = {"banks": ("A", "B"), "oil": ("X", "Y")}
ROLE = "CONSULTANT"
USERS = {"cora": ROLE}
CLEARANCE = {"banks": "A", "oil": "X"}
PROVIDER = "INFO_PROVIDER"  # Ed's role: the analysts publish as Ed
STREAM, SCHEMA = "advice", "advice"
FIELDS = {"time": "timestamp", "company": "string", "advice": "string", "target": "double"}
# What each piece of advice is about: its level, and the text the table shows for it.
SUBJECTS = {
    "A": {"banks": "A"},
    "B": {"banks": "B"},
    "X": {"oil": "X"},
    "Y": {"oil": "Y"},
    "market": {},
}
OUTPUT = "advice_ax"
ADVICE = {
    "version": 1,
    "name": "advice_ax",
    "description": "seeds 000/001: the advice a consultant cleared for bank A and oil X may see",
    "level": CLEARANCE,
    "inputs": {STREAM: {}},
    "boxes": {"priced": {"type": "filter", "in": STREAM, "where": "target > 0"}},
    "outputs": {OUTPUT: {"from": "priced"}},
}
PERIOD = 2.0


def seed(svc, logins: dict[str, str], keep: Callable[[dict[str, str]], None]) -> dict[str, str]:
    """Joe adds the wall unless ``advice`` exists; return ``logins`` with cora's password,
    given to ``keep`` before she exists."""
    cat = svc.catalog
    if cat.core.snapshot.find(ObjectType.STREAM, STREAM) is not None:
        return logins
    logins, joe = add_demo_people(cat, logins, keep, USERS)
    for coi, companies in CLASSES.items():
        cat.levels.add_class(joe, coi)
        for company in companies:
            cat.levels.add_company(joe, coi, company)
    cat.objects.add_schema(joe, SCHEMA, {"fields": FIELDS, "event_time": "time"})
    cat.objects.add_stream(joe, STREAM, SCHEMA)
    cat.levels.set_stream(joe, STREAM, None, multilevel=True)
    cat.levels.set_clearance(joe, PROVIDER, {coi: "T" for coi in CLASSES})
    cat.levels.set_clearance(joe, ROLE, CLEARANCE)
    grants = [(r, Action.VIEW_OBJECT, ObjectType.SCHEMA, SCHEMA) for r in (PROVIDER, ROLE)]
    grants += [(PROVIDER, a, ObjectType.STREAM, STREAM) for a in (Action.VIEW_OBJECT, Action.WRITE)]
    grants += [
        (ROLE, a, ObjectType.STREAM, STREAM) for a in (Action.VIEW_OBJECT, Action.READ_TUPLE)
    ]
    grants += [
        (ROLE, Action.ADD, ObjectType.SYSTEM, "system"),
        (ROLE, Action.USE, ObjectType.BOX_TYPE, "filter"),
    ]
    for role, action, type_, name in grants:
        cat.grants.grant(joe, role, action, type_, name)
    cat.sessions.logout(joe)
    return logins


class AdviceFeed:
    """Ed's analysts: every ``period`` seconds a target price for each company and the market,
    each tuple at the level of what it is about."""

    def __init__(self, svc, password: str, period: float = PERIOD) -> None:
        self.svc, self.password, self.period = svc, password, period
        self.targets = {subject: random.uniform(20, 200) for subject in SUBJECTS}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-advice", daemon=True)

    def batch(self) -> list[dict]:
        now = datetime.now(timezone.utc).isoformat()
        out = []
        for subject, level in SUBJECTS.items():
            target = self.targets[subject] = self.targets[subject] * random.uniform(0.98, 1.02)
            advice = random.choice(("buy", "hold", "sell"))
            out.append(
                {"time": now, "company": subject, "advice": advice, "target": round(target, 2)}
                | {"_level": level}
            )
        return out

    def _run(self) -> None:
        ed = self.svc.catalog.sessions.login("ed", self.password)[1]
        while not self._stop.wait(self.period):
            try:
                self.svc.catalog.authorize(ed, "streams.append", {"name": STREAM})
                ingest(self.svc, ed, STREAM, self.batch)
            except Unauthenticated:
                ed = self.svc.catalog.sessions.login("ed", self.password)[1]
            except Exception:
                log.exception("demo advice feed failed; retrying")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
