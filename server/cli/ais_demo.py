"""Plausible AIS traffic in the Singapore Strait, as real encoded ``!AIVDM`` sentences.

Follows the ASSIST paper's section 7 recipe (seed 002): ships sail the strait's two traffic
lanes at 8 to 16 knots, each with a destination among 10 ports; boats belong to companies
drawn from a normal distribution (mean 30); a company feed (the paper's Route stream) tells
each boat's next leg and free cargo (always above zero, only ever decreasing), and covers
the AIS boats kept (90%) plus ten times as many boats that no receiver hears.

Everything comes from one seeded ``random.Random``, so a seed gives the same traffic (tests,
benchmarks); ``Traffic.tick`` moves the fleet on and returns the position reports (type 1),
``voyages`` the voyage data (type 5, two fragments each), each sentence carrying its time in
an NMEA 4 tag block (``\\c:SECONDS*hh\\``) so the stream's event time is the ship's.
"""

from __future__ import annotations

import functools
import math
import operator
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pyais.encode import encode_dict

# Ten ports a ship leaving the strait may be bound for: name -> (longitude, latitude).
PORTS = {
    "SINGAPORE": (103.84, 1.26),
    "TANJUNG PELEPAS": (103.55, 1.36),
    "PASIR GUDANG": (103.90, 1.44),
    "BATAM": (104.00, 1.16),
    "PORT KLANG": (101.39, 3.00),
    "MALACCA": (102.25, 2.19),
    "JAKARTA": (106.88, -6.10),
    "KUANTAN": (103.43, 3.97),
    "HONG KONG": (114.16, 22.30),
    "COLOMBO": (79.85, 6.95),
}
# The traffic separation scheme's centre lines, west to east (longitude, latitude): eastbound
# ships keep to the southern lane, westbound to the northern one.
EASTBOUND = ((103.40, 1.12), (103.70, 1.17), (103.90, 1.18), (104.10, 1.22), (104.45, 1.30))
WESTBOUND = ((104.45, 1.34), (104.10, 1.26), (103.90, 1.22), (103.70, 1.21), (103.40, 1.16))
KNOT_KM_H = 1.852
KM_PER_DEGREE = 111.195  # along a meridian; longitude is scaled by cos(latitude)
SHIP_TYPES = (70, 70, 70, 80, 80, 60)  # cargo, tanker, passenger
NAMES = ("OCEAN", "PACIFIC", "STAR", "PEARL", "LION", "MERLION", "HARMONY", "SPIRIT", "GLORY")
COMPANY_MEAN, COMPANY_SPREAD = 30, 6
KEPT, FAKE_PER_SHIP = 0.9, 10


def company_name(number: int) -> str:
    return f"C{number:02d}"


@dataclass
class Ship:
    mmsi: int
    name: str
    ship_type: int
    company: str
    destination: str
    lane: tuple[tuple[float, float], ...]
    knots: float
    travelled_km: float = 0.0

    def position(self) -> tuple[float, float, float]:
        """(longitude, latitude, course in degrees) where the ship is on its lane."""
        left = self.travelled_km % _length(self.lane)
        for (x0, y0), (x1, y1) in zip(self.lane, self.lane[1:], strict=False):
            leg = _km(x0, y0, x1, y1)
            if left <= leg:
                share = left / leg
                return x0 + (x1 - x0) * share, y0 + (y1 - y0) * share, _course(x0, y0, x1, y1)
            left -= leg
        x, y = self.lane[-1]
        return x, y, _course(*self.lane[-2], *self.lane[-1])


def _km(x0: float, y0: float, x1: float, y1: float) -> float:
    dx = (x1 - x0) * math.cos(math.radians((y0 + y1) / 2))
    return math.hypot(dx, y1 - y0) * KM_PER_DEGREE


def _course(x0: float, y0: float, x1: float, y1: float) -> float:
    dx = (x1 - x0) * math.cos(math.radians((y0 + y1) / 2))
    return math.degrees(math.atan2(dx, y1 - y0)) % 360


@functools.cache
def _length(lane: tuple[tuple[float, float], ...]) -> float:
    return sum(_km(*a, *b) for a, b in zip(lane, lane[1:], strict=False))


def _tagged(sentence: str, seconds: int) -> str:
    tag = f"c:{seconds}"
    checksum = functools.reduce(operator.xor, tag.encode(), 0)
    return f"\\{tag}*{checksum:02X}\\{sentence}"


class Traffic:
    """A fleet in the strait, the companies that own it, and their Route feed."""

    def __init__(
        self, ships: int = 40, seed: int = 7, start: datetime | None = None, pace: float = 1.0
    ) -> None:
        """``pace`` seconds of sailing pass for each second of the clock (a live demo's ships
        would hardly move at 1)."""
        self.rng, self.pace = random.Random(seed), pace
        self.seconds = int((start or datetime(2026, 1, 1, tzinfo=timezone.utc)).timestamp())
        self.ships = [self._ship(k) for k in range(ships)]
        heard = [s.mmsi for s in self.ships if self.rng.random() < KEPT]
        unheard = [900_000_000 + k for k in range(len(self.ships) * FAKE_PER_SHIP)]
        self.routes: dict[int, dict[str, Any]] = {
            mmsi: {
                "mmsi": mmsi,
                "company": self._company(),
                "next_leg": self.rng.choice(list(PORTS)),
                "free_load": self.rng.randint(50, 2000),
            }
            for mmsi in heard + unheard
        }
        for ship in self.ships:
            if ship.mmsi in self.routes:
                self.routes[ship.mmsi].update(company=ship.company, next_leg=ship.destination)

    def _company(self) -> str:
        number = round(self.rng.gauss(COMPANY_MEAN, COMPANY_SPREAD))
        return company_name(min(max(number, 1), 2 * COMPANY_MEAN))

    def _ship(self, k: int) -> Ship:
        rng = self.rng
        lane = EASTBOUND if rng.random() < 0.5 else WESTBOUND
        return Ship(
            mmsi=563_000_000 + rng.randrange(1_000_000),
            name=f"{rng.choice(NAMES)} {k + 1}",
            ship_type=rng.choice(SHIP_TYPES),
            company=self._company(),
            destination=rng.choice(list(PORTS)),
            lane=lane,
            knots=rng.uniform(8, 16),
            travelled_km=rng.uniform(0, _length(lane)),
        )

    def ownership(self) -> dict[str, list[int]]:
        """Company -> the MMSIs of its ships in the strait (a user attribute such as the
        paper's ShipList(self))."""
        owned: dict[str, list[int]] = {}
        for ship in self.ships:
            owned.setdefault(ship.company, []).append(ship.mmsi)
        return owned

    def tick(self, seconds: int) -> list[str]:
        """Move every ship on by ``seconds`` and return one position report each."""
        self.seconds += seconds
        sentences = []
        for ship in self.ships:
            ship.travelled_km += ship.knots * KNOT_KM_H * seconds * self.pace / 3600
            lon, lat, course = ship.position()
            report: dict[str, str | int | float | bytes | bool] = {
                "type": 1,
                "mmsi": ship.mmsi,
                "status": 0,
                "lon": round(lon, 5),
                "lat": round(lat, 5),
                "speed": round(ship.knots, 1),
                "course": round(course, 1),
                "heading": round(course) % 360,
                "second": self.seconds % 60,
            }
            (sentence,) = encode_dict(report, sentence_type="VDM")
            sentences.append(_tagged(sentence, self.seconds))
        return sentences

    def voyages(self) -> list[str]:
        """One voyage-data message (two fragments) per ship, with its destination."""
        sentences = []
        for k, ship in enumerate(self.ships):
            data: dict[str, str | int | float | bytes | bool] = {
                "type": 5,
                "mmsi": ship.mmsi,
                "imo": 9_000_000 + ship.mmsi % 1_000_000,
                "callsign": f"9V{ship.mmsi % 10_000:04d}",
                "shipname": ship.name,
                "ship_type": ship.ship_type,
                "destination": ship.destination,
                "draught": round(6 + ship.ship_type % 10 * 1.5, 1),
            }
            for part in encode_dict(data, sentence_type="VDM", seq_id=k % 10):
                sentences.append(_tagged(part, self.seconds))
        return sentences

    def route_updates(self, share: float = 0.2) -> list[dict]:
        """The companies' feed: every boat's next leg and free cargo; a ``share`` of them load
        some cargo first (free cargo only decreases, and stays above zero)."""
        for route in self.routes.values():
            if self.rng.random() < share:
                route["free_load"] = max(1, route["free_load"] - self.rng.randint(1, 100))
        return [{**route, "time": float(self.seconds)} for route in self.routes.values()]
