"""Geography and trigonometry: known values, NULL rules, refusals, and Spark against the reference.

Every case runs through the Python reference and, in one select, through real Spark; a
property test then draws positions, boxes and polygons around the Singapore Strait (and across
the antimeridian) and compares the two on each.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boxes import codes
from boxes.errors import DiagramInvalid
from boxes.expressions import check_expression, geo
from boxes.types import DataType, Field, Schema
from tests.boxes.expressions.reference.evaluate import evaluate
from tests.boxes.expressions.reference.functions import PYTHON

D = DataType.DOUBLE
SCHEMA = Schema(tuple(Field(name, D) for name in ("lon", "lat", "lon2", "lat2", "x", "y")))
NAN, INF = float("nan"), float("inf")
R = geo.EARTH_RADIUS_KM
_ = None
# Singapore's main strait, roughly: a concave ring (the notch at 103.9 cuts out Sentosa's bay).
STRAIT = (
    "103.6 1.15, 104.2 1.15, 104.2 1.3, 103.95 1.3, 103.9 1.22, 103.85 1.3, 103.6 1.3, 103.6 1.15"
)
L_SHAPE = "0 0, 2 0, 2 1, 1 1, 1 2, 0 2"  # an L: the square (1..2, 1..2) is outside

# (expression, row, expected); a float is compared to a relative 1e-9.
CASES = [
    # trigonometry (radians), Java's answers for domain errors
    ("sin(x)", {"x": math.pi / 2}, 1.0),
    ("cos(x)", {"x": 0.0}, 1.0),
    ("tan(x)", {"x": math.pi / 4}, math.tan(math.pi / 4)),
    ("sin(x)", {"x": INF}, NAN),
    ("asin(x)", {"x": 2.0}, NAN),
    ("acos(x)", {"x": -1.0}, math.pi),
    ("atan(x)", {"x": INF}, math.pi / 2),
    ("atan2(y, x)", {"y": 1.0, "x": -1.0}, 3 * math.pi / 4),
    ("atan2(y, x)", {"y": 0.0, "x": -0.0}, 0.0),  # Spark reads -0.0 as 0.0
    ("atan2(y, x)", {"y": _, "x": 1.0}, _),
    ("degrees(atan2(1, 1))", {}, 45.0),
    ("radians(180)", {}, math.pi),
    ("sqrt(x)", {"x": 2.0}, math.sqrt(2.0)),
    ("cos(x)", {"x": _}, _),
    # great-circle distance, km
    (
        "distance_km(lon, lat, lon2, lat2)",
        {"lon": 0.0, "lat": 0.0, "lon2": 0.0, "lat2": 1.0},
        R * math.pi / 180,
    ),
    (
        "distance_km(lon, lat, lon2, lat2)",
        {"lon": 0.0, "lat": 0.0, "lon2": 180.0, "lat2": 0.0},
        R * math.pi,
    ),
    (
        "distance_km(lon, lat, lon2, lat2)",
        {"lon": 10.0, "lat": 90.0, "lon2": -80.0, "lat2": -90.0},
        R * math.pi,
    ),
    ("distance_km(lon, lat, lon, lat)", {"lon": 103.8, "lat": 1.26}, 0.0),
    (
        "distance_km(lon, lat, lon2, lat2)",
        {"lon": 179.5, "lat": 0.0, "lon2": -179.5, "lat2": 0.0},
        R * math.pi / 180,
    ),
    ("distance_km(lon, lat, 0, 0)", {"lon": 181.0, "lat": 91.0}, _),  # AIS "not available"
    ("distance_km(lon, lat, 0, 0)", {"lon": NAN, "lat": 0.0}, _),
    ("distance_km(lon, lat, 0, 0)", {"lon": 0.0, "lat": -INF}, _),
    ("distance_km(lon, lat, 0, 0)", {"lon": _, "lat": 0.0}, _),
    # point in box, edges included, across the antimeridian when west > east
    ("point_in_box(lon, lat, 103.6, 1.15, 104.2, 1.3)", {"lon": 103.8, "lat": 1.2}, True),
    ("point_in_box(lon, lat, 103.6, 1.15, 104.2, 1.3)", {"lon": 103.6, "lat": 1.3}, True),
    ("point_in_box(lon, lat, 103.6, 1.15, 104.2, 1.3)", {"lon": 104.3, "lat": 1.2}, False),
    ("point_in_box(lon, lat, 170, -10, -170, 10)", {"lon": 179.0, "lat": 0.0}, True),
    ("point_in_box(lon, lat, 170, -10, -170, 10)", {"lon": -175.0, "lat": 0.0}, True),
    ("point_in_box(lon, lat, 170, -10, -170, 10)", {"lon": 0.0, "lat": 0.0}, False),
    ("point_in_box(lon, lat, 0, 10, 1, -10)", {"lon": 0.5, "lat": 0.0}, False),  # south > north
    ("point_in_box(lon, lat, 0, 0, 1, 91)", {"lon": 0.5, "lat": 0.5}, _),  # not a box
    ("point_in_box(lon, lat, 0, 0, 1, 1)", {"lon": 0.5, "lat": NAN}, _),
    ("point_in_box(lon, lat, 0, 0, x, 1)", {"lon": 0.5, "lat": 0.5, "x": _}, _),
    # point in polygon
    (f"point_in_polygon(lon, lat, '{STRAIT}')", {"lon": 103.7, "lat": 1.2}, True),
    (f"point_in_polygon(lon, lat, '{STRAIT}')", {"lon": 103.9, "lat": 1.28}, False),  # the notch
    (f"point_in_polygon(lon, lat, '{STRAIT}')", {"lon": 103.9, "lat": 1.2}, True),
    (f"point_in_polygon(lon, lat, '{STRAIT}')", {"lon": 103.5, "lat": 1.2}, False),
    (f"point_in_polygon(lon, lat, '{L_SHAPE}')", {"lon": 0.5, "lat": 1.5}, True),
    (f"point_in_polygon(lon, lat, '{L_SHAPE}')", {"lon": 1.5, "lat": 1.5}, False),
    (f"point_in_polygon(lon, lat, '{L_SHAPE}')", {"lon": 1.5, "lat": 0.5}, True),
    (f"point_in_polygon(lon, lat, '{L_SHAPE}')", {"lon": -0.5, "lat": 0.5}, False),
    (f"point_in_polygon(lon, lat, '{L_SHAPE}')", {"lon": 181.0, "lat": 91.0}, _),
    (f"point_in_polygon(lon, lat, '{L_SHAPE}')", {"lon": _, "lat": 0.5}, _),
    (
        "point_in_polygon(lon, lat, '0 0, 1 0, 0 1') = "
        "point_in_polygon(lon, lat, '0 0, 1 0, 0 1, 0 0')",
        {"lon": 0.2, "lat": 0.2},
        True,
    ),
]


def _row(values: dict) -> dict:
    return {f.name: values.get(f.name) for f in SCHEMA.fields}


def _same(got, want) -> bool:
    if isinstance(want, float) and isinstance(got, float):
        if math.isnan(want) or math.isnan(got):
            return math.isnan(want) and math.isnan(got)
        return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
    return type(got) is type(want) and got == want


@pytest.mark.parametrize(
    "text, values, want", CASES, ids=[f"{i}:{c[0][:40]}" for i, c in enumerate(CASES)]
)
def test_python_reference(text, values, want):
    got = evaluate(check_expression(text, SCHEMA, "e"), _row(values))
    assert _same(got, want), got


def test_spark_agrees_natively(spark):
    checked = [check_expression(text, SCHEMA, "e") for text, _, _ in CASES]
    rows = [tuple(_row(values)[f.name] for f in SCHEMA.fields) for _, values, _ in CASES]
    frame = spark.createDataFrame(rows, SCHEMA.spark_type()).coalesce(1)
    selected = frame.select(*[c.to_column().alias(f"e{i}") for i, c in enumerate(checked)])
    plan = selected._jdf.queryExecution().executedPlan().toString()
    assert "EvalPython" not in plan and "PythonUDF" not in plan, plan
    results = selected.collect()
    wrong = [
        (text, results[i][i], want)
        for i, (text, _, want) in enumerate(CASES)
        if not _same(results[i][i], want)
    ]
    assert not wrong


def test_known_distances():
    def km(lon1, lat1, lon2, lat2):
        checked = check_expression("distance_km(lon, lat, lon2, lat2)", SCHEMA, "e")
        return evaluate(checked, _row({"lon": lon1, "lat": lat1, "lon2": lon2, "lat2": lat2}))

    # Raffles Lighthouse to Horsburgh Lighthouse, the strait's two ends: about 76 km.
    assert km(103.7406, 1.1600, 104.4067, 1.3306) == pytest.approx(76.4, abs=1)
    # London to Paris on the sphere: about 343.5 km.
    assert km(-0.1278, 51.5074, 2.3522, 48.8566) == pytest.approx(343.5, abs=1)
    assert km(0, 0, 0, 1) == pytest.approx(111.195, abs=0.001)  # a degree of a meridian


REFUSED = [
    ("sin(x, y)", codes.ARITY, "sin() takes 1 argument; got 2"),
    ("atan2(y)", codes.ARITY, "atan2() takes 2 arguments; got 1"),
    ("distance_km(lon, lat, lon2)", codes.ARITY, "distance_km() takes 4 arguments; got 3"),
    ("point_in_box(lon, lat, 0, 0, 1)", codes.ARITY, "point_in_box() takes 6 arguments; got 5"),
    ("point_in_polygon(lon, lat)", codes.ARITY, "point_in_polygon() takes 3 arguments; got 2"),
    ("cos('a')", codes.TYPE_MISMATCH, "cos() expects double for argument 1; got string ('a')"),
    (
        "distance_km(lon, lat, TRUE, 0)",
        codes.TYPE_MISMATCH,
        "distance_km() expects double for argument 3; got boolean",
    ),
    (
        "point_in_box(lon, lat, 0, 0, 1, 1) + 1",
        codes.TYPE_MISMATCH,
        "+ needs numeric operands; got boolean",
    ),
    ("point_in_polygon(lon, lat, 'a' || 'b')", codes.EXPR_SYNTAX, "unexpected"),
    (
        "point_in_polygon(lon, lat, concat('0 0, 1 0, ', '0 1'))",
        codes.INVALID_POLYGON,
        "needs a literal polygon",
    ),
    ("point_in_polygon(lon, lat, 3)", codes.INVALID_POLYGON, "needs a literal polygon"),
    (
        "point_in_polygon(lon, lat, '0 0, 1 0')",
        codes.INVALID_POLYGON,
        "at least 3 distinct vertices",
    ),
    (
        "point_in_polygon(lon, lat, '0 0, 1 0, 0 0')",
        codes.INVALID_POLYGON,
        "at least 3 distinct vertices",
    ),
    (
        "point_in_polygon(lon, lat, '0 0, 1 0, 2 0')",
        codes.INVALID_POLYGON,
        "share one longitude or one latitude",
    ),
    (
        "point_in_polygon(lon, lat, '0 0, 1 0; 0 1')",
        codes.INVALID_POLYGON,
        "vertex 2 ('1 0; 0 1') is not",
    ),
    ("point_in_polygon(lon, lat, '0 0, 1 nan, 0 1')", codes.INVALID_POLYGON, "vertex 2"),
    ("point_in_polygon(lon, lat, '0 0, 1 0 5, 0 1')", codes.INVALID_POLYGON, "vertex 2"),
    ("point_in_polygon(lon, lat, '0 0, 181 0, 0 1')", codes.INVALID_POLYGON, "outside longitude"),
    ("point_in_polygon(lon, lat, '0 0, 1 -90.5, 0 1')", codes.INVALID_POLYGON, "outside longitude"),
    ("point_in_polygon(lon, lat, '')", codes.INVALID_POLYGON, "vertex 1 ('') is not"),
    ("sinh(x)", codes.UNKNOWN_FUNCTION, "did you mean 'sin'"),
]


@pytest.mark.parametrize("text, code, fragment", REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals_say_what_is_wrong(text, code, fragment):
    with pytest.raises(DiagramInvalid) as caught:
        check_expression(text, SCHEMA, "boxes.f.where")
    assert caught.value.codes == [code]
    assert fragment in caught.value.problems[0].message


def test_a_polygon_has_a_bounded_size():
    ring = ", ".join(
        f"{math.cos(k / 100):.3f} {math.sin(k / 100):.3f}" for k in range(geo.MAX_VERTICES + 1)
    )
    assert f"at most {geo.MAX_VERTICES} vertices" in geo.parse_polygon(ring)
    assert len(geo.parse_polygon(ring.rsplit(",", 1)[0])) == geo.MAX_VERTICES


def test_the_widest_polygon_builds_a_shallow_spark_expression(spark):
    """The most edges a polygon may have: one generated method still holds them all, and the
    parity is a balanced tree, so Catalyst does not recurse deeply."""
    from pyspark.sql import functions as F

    turn = 2 * math.pi / geo.MAX_VERTICES
    ring = [(100 + math.cos(k * turn), math.sin(k * turn)) for k in range(geo.MAX_VERTICES)]
    text = ", ".join(f"{x!r} {y!r}" for x, y in ring)
    points = [(100.0, 0.0), (100.9, 0.9), (101.0, 1.0), (98.0, 0.0), (100.7, -0.7)]
    frame = spark.createDataFrame(points, "lon double, lat double")
    column = geo.point_in_polygon(F, F.col("lon"), F.col("lat"), text)
    got = [r[0] for r in frame.select(column).collect()]
    assert got == [PYTHON["point_in_polygon"](x, y, text) for x, y in points]
    assert got == [True, False, False, False, True]


LONS = st.one_of(
    st.floats(103.5, 104.3), st.floats(-180, 180), st.sampled_from([-180.0, 180.0, 0.0, 103.9])
)
LATS = st.one_of(
    st.floats(1.1, 1.4), st.floats(-90, 90), st.sampled_from([-90.0, 90.0, 0.0, 1.22, 91.0])
)
VERTICES = st.lists(
    st.tuples(st.floats(103.5, 104.3), st.floats(1.1, 1.4)), min_size=3, max_size=12
)


def _ring(vertices) -> str | None:
    text = ", ".join(f"{x!r} {y!r}" for x, y in vertices)
    return None if isinstance(geo.parse_polygon(text), str) else text


@settings(
    max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data())
def test_spark_agrees_with_the_reference_on_random_places(spark, data):
    rings = data.draw(
        st.lists(VERTICES.map(_ring).filter(bool), min_size=3, max_size=3), label="rings"
    )
    corners = data.draw(
        st.lists(st.tuples(LONS, LATS, LONS, LATS), min_size=3, max_size=3), label="boxes"
    )
    texts = [f"point_in_polygon(lon, lat, '{ring}')" for ring in rings]
    texts += [f"point_in_box(lon, lat, {w!r}, {s!r}, {e!r}, {n!r})" for w, s, e, n in corners]
    texts += ["distance_km(lon, lat, lon2, lat2)", "degrees(atan2(lat2 - lat, lon2 - lon))"]
    texts += ["point_in_box(lon, lat, lon2, lat2, x, y)", "acos(sin(radians(lat)))"]
    rows = data.draw(
        st.lists(st.tuples(LONS, LATS, LONS, LATS, LONS, LATS), min_size=20, max_size=40),
        label="rows",
    )
    # Points on the rings' vertices and edges' midpoints: where ray casting is most fragile.
    ring_points = [geo.parse_polygon(r) for r in rings]
    rows += [(x, y, 0.0, 0.0, 0.0, 0.0) for ring in ring_points for x, y in ring]
    rows += [
        ((x0 + x1) / 2, (y0 + y1) / 2, 0.0, 0.0, 0.0, 0.0)
        for ring in ring_points
        for (x0, y0), (x1, y1) in zip(ring, ring[1:] + ring[:1], strict=True)
    ]
    checked = [check_expression(text, SCHEMA, "e") for text in texts]
    frame = spark.createDataFrame(rows, SCHEMA.spark_type())
    results = frame.select(*[c.to_column().alias(f"e{i}") for i, c in enumerate(checked)]).collect()
    names = [f.name for f in SCHEMA.fields]
    disagreements = [
        (c.text, row, result[i], evaluate(c, dict(zip(names, row, strict=True))))
        for result, row in zip(results, rows, strict=True)
        for i, c in enumerate(checked)
        if not _same(result[i], evaluate(c, dict(zip(names, row, strict=True))))
    ]
    assert not disagreements, disagreements[:5]
