"""Seed 002's subjects in the demo: a port authority and a ship company watching the strait.

``seed`` adds (once) the roles PORT_AUTHORITY and SHIPCO with a user each (``pat``, the port
of Singapore's authority, whose attributes are the port's waters; ``sam``, the company that
owns the most ships of the demo's fleet, whose attribute is its ship list), Table 2-style read
policies on ``ais`` for them (and read-all ones for Joe's and Al's roles, so what they could
read before the stream was protected they still can), and ``strait``: the port authority's
diagram of every ship with a position. Deployed by ``pat``, it runs rewritten to the port's
waters; ``sam`` may subscribe to it too and receives its own ships, through a variant of the
diagram rewritten for the company (docs/rewrite.md), on the live map.
"""

from __future__ import annotations

from collections.abc import Callable

from catalog import Action, ObjectType
from catalog.bootstrap import add_demo_people
from server.cli.ais_demo import Traffic

ROLES = ("PORT_AUTHORITY", "SHIPCO")
USERS = {"pat": "PORT_AUTHORITY", "sam": "SHIPCO"}
# The port of Singapore's waters: a box over the eastbound lane off the port.
PORT_WATERS = {"west": 103.7, "south": 1.2, "east": 103.9, "north": 1.3}
POLICIES = [
    {
        "name": "port-waters",
        "role": "PORT_AUTHORITY",
        "streams": {"ais": "*"},
        "where": "point_in_box(lon, lat, self.west, self.south, self.east, self.north)",
        "privilege": "read",
    },
    {
        "name": "own-ships",
        "role": "SHIPCO",
        "streams": {"ais": "*"},
        "where": "mmsi IN (self.ships)",
        "privilege": "read",
    },
    *(
        {"name": f"all-ships-{r.lower()}", "role": r, "streams": {"ais": "*"}, "privilege": "read"}
        for r in ("ADMIN", "CUSTOMER1")
    ),
]
OUTPUT = "ships"
STRAIT = {
    "version": 1,
    "name": "strait",
    "description": "seed 002: ships in the strait, as each reader's policies allow",
    "inputs": {"ais": {}},
    "boxes": {"moving": {"type": "filter", "in": "ais", "where": "mmsi > 0"}},
    "outputs": {OUTPUT: {"from": "moving"}},
}


def fleet() -> tuple[str, list[int]]:
    """The company with the most ships in the demo's traffic (the feed's fleet: same seed)."""
    owned = Traffic().ownership()
    company = max(sorted(owned), key=lambda c: len(owned[c]))
    return company, sorted(owned[company])


def seed(svc, logins: dict[str, str], keep: Callable[[dict[str, str]], None]) -> dict[str, str]:
    """Joe adds the port scenario unless ``pat`` exists; return ``logins`` with the new
    users'. Their passwords are given to ``keep`` before the users exist."""
    cat = svc.catalog
    if "pat" in cat.core.snapshot.users_by_name:
        return logins
    logins, joe = add_demo_people(cat, logins, keep, USERS)
    for role in ROLES:
        for action, type_, name in (
            (Action.VIEW_OBJECT, ObjectType.SCHEMA, "ais_position"),
            (Action.VIEW_OBJECT, ObjectType.STREAM, "ais"),
            (Action.READ_TUPLE, ObjectType.STREAM, "ais"),
            (Action.ADD, ObjectType.SYSTEM, "system"),
            (Action.USE, ObjectType.BOX_TYPE, "filter"),
        ):
            cat.grants.grant(joe, role, action, type_, name)
    cat.policies.put(joe, POLICIES)
    cat.policies.set_attributes(joe, "pat", {**PORT_WATERS, "port": "SINGAPORE"})
    company, ships = fleet()
    cat.policies.set_attributes(joe, "sam", {"company": company, "ships": ships})
    cat.sessions.logout(joe)
    return logins


def share(svc, password: str) -> None:
    """Pat lets ship companies watch ``strait`` (once it exists: pat added it)."""
    cat = svc.catalog
    _, pat = cat.sessions.login("pat", password)
    for type_, name in ((ObjectType.DIAGRAM, "strait"), (ObjectType.OUTPUT, OUTPUT)):
        cat.grants.grant(pat, "SHIPCO", Action.VIEW_OBJECT, type_, name)
    cat.grants.grant(pat, "SHIPCO", Action.SUBSCRIBE, ObjectType.OUTPUT, OUTPUT)
    cat.sessions.logout(pat)
