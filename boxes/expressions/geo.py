"""Geography for the expression language: great-circle distance, point in box, point in polygon.

Positions are (longitude, latitude) in degrees, WGS84, in that order everywhere (as in GeoJSON
and WKT). A coordinate outside its range (longitude -180 to 180, latitude -90 to 90), NaN or
infinite is not a position and makes the result NULL: AIS itself sends latitude 91 and
longitude 181 for "not available", and those must not land anywhere on the map.

Each builder makes a native Spark Column from ``pyspark.sql.functions`` (no UDF): the haversine
formula for distances, and for polygons a ray-casting test whose edges are constants computed
here, so Spark evaluates one comparison per edge. The tests hold a plain-Python reference of
each (``tests/boxes/expressions/reference/functions.py``).
"""

from __future__ import annotations

import re
from functools import reduce

# The mean Earth radius (IUGG), in kilometres: a sphere is within 0.5% of the ellipsoid.
EARTH_RADIUS_KM = 6371.0088
MIN_VERTICES = 3
# Each edge is a few comparisons in Spark's generated code: at about 250 edges one method
# passes the JVM's 64 KB and Spark falls back to slow interpreted evaluation (logging the whole
# plan). A port's boundary simplified to 100 vertices is still finer than AIS positions.
MAX_VERTICES = 100
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_PAIR = re.compile(rf"\s*({_NUMBER})\s+({_NUMBER})\s*")

Vertex = tuple[float, float]


def parse_polygon(text: str) -> tuple[Vertex, ...] | str:
    """The vertices of ``'lon lat, lon lat, ...'`` (a WKT ring's coordinates), or why not.

    The ring may be closed (last vertex equal to the first) or not; at least 3 distinct
    vertices and at most ``MAX_VERTICES``, each a position in range.

    >>> parse_polygon("103.6 1.15, 104.2 1.15, 104.2 1.3, 103.6 1.15")
    ((103.6, 1.15), (104.2, 1.15), (104.2, 1.3))
    >>> parse_polygon("103.6 1.15; 104.2 1.15")
    "vertex 1 ('103.6 1.15; 104.2 1.15') is not 'longitude latitude'"
    """
    parts = text.split(",")
    if len(parts) > MAX_VERTICES + 1:
        return f"a polygon has at most {MAX_VERTICES} vertices; this one has {len(parts)}"
    vertices = []
    for number, part in enumerate(parts, 1):
        match = _PAIR.fullmatch(part)
        if match is None:
            return f"vertex {number} ({part.strip()!r}) is not 'longitude latitude'"
        lon, lat = float(match[1]), float(match[2])
        if not (-180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0):
            return f"vertex {number} ({part.strip()}) is outside longitude ±180, latitude ±90"
        vertices.append((lon, lat))
    if len(vertices) > 1 and vertices[0] == vertices[-1]:
        vertices.pop()
    if len(vertices) > MAX_VERTICES:
        return f"a polygon has at most {MAX_VERTICES} vertices; this one has {len(vertices)}"
    if len(set(vertices)) < MIN_VERTICES:
        return f"a polygon needs at least {MIN_VERTICES} distinct vertices"
    if len({lon for lon, _ in vertices}) < 2 or len({lat for _, lat in vertices}) < 2:
        return "a polygon needs an area; its vertices share one longitude or one latitude"
    return tuple(vertices)


def edges(vertices: tuple[Vertex, ...]) -> list[tuple[float, float, float, float]]:
    """The ring's non-horizontal edges as (x0, y0, y1, slope): a horizontal ray crosses the
    edge from (x0, y0) to its other end at x = x0 + (y - y0) * slope."""
    pairs = zip(vertices, vertices[1:] + vertices[:1], strict=True)
    return [(x0, y0, y1, (x1 - x0) / (y1 - y0)) for (x0, y0), (x1, y1) in pairs if y0 != y1]


def _position(lon, lat):
    """Spark's ``between`` is false for NaN (NaN sorts above every number), NULL for NULL."""
    return lon.between(-180.0, 180.0) & lat.between(-90.0, 90.0)


def distance_km(F, lon1, lat1, lon2, lat2):
    """Haversine great-circle distance in kilometres on a sphere of ``EARTH_RADIUS_KM``."""
    half_dlat = F.sin(F.radians(lat2 - lat1) / 2.0)
    half_dlon = F.sin(F.radians(lon2 - lon1) / 2.0)
    h = half_dlat * half_dlat + F.cos(F.radians(lat1)) * F.cos(F.radians(lat2)) * (
        half_dlon * half_dlon
    )
    h = F.least(h, F.lit(1.0))
    central = 2.0 * F.atan2(F.sqrt(h), F.sqrt(1.0 - h))
    return F.when(_position(lon1, lat1) & _position(lon2, lat2), central * EARTH_RADIUS_KM)


def point_in_box(F, lon, lat, west, south, east, north):
    """Inside the box, its edges included; a box whose west edge is east of its east edge
    crosses the antimeridian (170 to -170 is 20 degrees wide)."""
    corners = _position(west, south) & _position(east, north)
    across = F.when(west <= east, lon.between(west, east)).otherwise((lon >= west) | (lon <= east))
    return F.when(_position(lon, lat) & corners, lat.between(south, north) & across)


def point_in_polygon(F, lon, lat, polygon: str):
    """Ray casting (even-odd rule) against the literal's ring, inside its bounding box."""
    vertices = parse_polygon(polygon)
    assert not isinstance(vertices, str), vertices  # the checker refused it otherwise
    xs, ys = [v[0] for v in vertices], [v[1] for v in vertices]
    crossings = [
        ((lat < y0) != (lat < y1)) & (lon < (lat - y0) * slope + x0)
        for x0, y0, y1, slope in edges(vertices)
    ]
    inside = lon.between(min(xs), max(xs)) & lat.between(min(ys), max(ys)) & _parity(crossings)
    return F.when(_position(lon, lat), inside)


def _parity(crossings: list):
    """True when an odd number cross, as a balanced tree of XORs (``!=``): a deep chain of
    hundreds of nodes would strain Catalyst's recursive rules."""
    while len(crossings) > 1:
        pairs = [crossings[i : i + 2] for i in range(0, len(crossings), 2)]
        crossings = [reduce(lambda a, b: a != b, pair) for pair in pairs]
    return crossings[0]
