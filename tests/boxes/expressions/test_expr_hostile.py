"""Hostile expressions: each is refused with its own error code, before anything reaches Spark."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from boxes import codes
from boxes.errors import DiagramInvalid
from boxes.expressions import check_aggregate, check_expression
from boxes.types import DataType, Field, Schema

SCHEMA = Schema(
    (
        Field("price", DataType.DOUBLE),
        Field("qty", DataType.LONG),
        Field("symbol", DataType.STRING),
        Field("time", DataType.TIMESTAMP),
        Field("ok", DataType.BOOLEAN),
    )
)

HOSTILE_EXPRESSIONS = [
    ("java_method('java.lang.Runtime', 'getRuntime')", codes.FORBIDDEN_FUNCTION),
    ("reflect('java.lang.Runtime', 'exec', 'rm -rf /')", codes.FORBIDDEN_FUNCTION),
    ("try_reflect('java.lang.System', 'exit', '0')", codes.FORBIDDEN_FUNCTION),
    ("JAVA_METHOD('java.lang.System', 'exit', 0)", codes.FORBIDDEN_FUNCTION),
    ("java.lang.Runtime.getRuntime().exec('id')", codes.FORBIDDEN_FUNCTION),
    ("java.lang.Runtime.exec('id')", codes.FORBIDDEN_FUNCTION),
    ("spark_catalog.default.steal(symbol)", codes.FORBIDDEN_FUNCTION),
    ("my_udf(price)", codes.FORBIDDEN_FUNCTION),
    ("pandas_udf(price)", codes.FORBIDDEN_FUNCTION),
    ("eval('1 + 1')", codes.FORBIDDEN_FUNCTION),
    ("explode(symbol)", codes.FORBIDDEN_FUNCTION),
    ("stack(2, price, qty)", codes.FORBIDDEN_FUNCTION),
    ("raise_error('boom')", codes.FORBIDDEN_FUNCTION),
    ("assert_true(price > 0)", codes.FORBIDDEN_FUNCTION),
    ("input_file_name()", codes.FORBIDDEN_FUNCTION),
    ("spark_partition_id()", codes.FORBIDDEN_FUNCTION),
    ("monotonically_increasing_id()", codes.FORBIDDEN_FUNCTION),
    ("current_timestamp()", codes.FORBIDDEN_FUNCTION),
    ("current_user() = 'admin'", codes.FORBIDDEN_FUNCTION),
    ("rand() > 0.5", codes.FORBIDDEN_FUNCTION),
    ("uuid()", codes.FORBIDDEN_FUNCTION),
    ("shuffle(symbol)", codes.FORBIDDEN_FUNCTION),
    ("xpath_string(symbol, '//a')", codes.FORBIDDEN_FUNCTION),
    ("price > (SELECT max(price) FROM trades)", codes.FORBIDDEN_SYNTAX),
    ("EXISTS (select 1)", codes.FORBIDDEN_SYNTAX),
    ("*", codes.FORBIDDEN_SYNTAX),
    ("count(*)", codes.FORBIDDEN_SYNTAX),
    ("`_label` = 0", codes.FORBIDDEN_SYNTAX),
    ("price > 0; DROP TABLE users", codes.FORBIDDEN_SYNTAX),
    ("price > 0 -- and the rest is ignored", codes.FORBIDDEN_SYNTAX),
    ("price /* hidden */ + 1", codes.FORBIDDEN_SYNTAX),
    ("transform(symbol, x -> x)", codes.FORBIDDEN_SYNTAX),
    ("named_struct('a', price)", codes.FORBIDDEN_SYNTAX),
    ("array(price, qty)", codes.FORBIDDEN_SYNTAX),
    ("map('k', symbol)", codes.FORBIDDEN_SYNTAX),
    ("symbol[0]", codes.FORBIDDEN_SYNTAX),
    ('symbol = "x"', codes.FORBIDDEN_SYNTAX),
    ("trades.price > 0", codes.FORBIDDEN_SYNTAX),
    ("_label", codes.LABEL_REFERENCE),
    ("_label & 1 = 1", codes.EXPR_SYNTAX),
    ("_label = 0 OR ok", codes.LABEL_REFERENCE),
    ("_sources IS NOT NULL", codes.LABEL_REFERENCE),
    ("coalesce(_label, 0) > 0", codes.LABEL_REFERENCE),
    ("secret_column > 0", codes.UNKNOWN_FIELD),
    ("from_json(symbol, 'a int') IS NULL", codes.UNKNOWN_FUNCTION),
    ("sum(price) > 0", codes.AGGREGATE_NOT_ALLOWED),
    ("lower(symbol, symbol)", codes.ARITY),
    ("99999999999999999999 > qty", codes.INVALID_LITERAL),
    ("price < 1e999", codes.INVALID_LITERAL),
    ("symbol LIKE 'a\\b'", codes.INVALID_LITERAL),
    ("point_in_polygon(price, price, symbol)", codes.INVALID_POLYGON),
    ("point_in_polygon(price, price, '0 0, 1 0, 0 1)) OR (1 = 1')", codes.INVALID_POLYGON),
    ("symbol LIKE '%a%a%a%a%a%a%a%a%b'", codes.INVALID_LITERAL),
    ("CAST(symbol AS binary) IS NULL", codes.UNKNOWN_TYPE),
    ("'1' + 1", codes.TYPE_MISMATCH),
    ("price \x00 1", codes.EXPR_SYNTAX),
    ("price " * 1000, codes.EXPR_TOO_LONG),
    ("abs(" * 80 + "price" + ")" * 80, codes.TOO_DEEP),
    ("(" * 2000 + "price" + ")" * 2000 + " > 0", codes.TOO_DEEP),
    ("- " * 1000 + "price", codes.TOO_DEEP),
    (" + ".join(["price"] * 500), codes.TOO_DEEP),
]

HOSTILE_AGGREGATES = [
    ("sum(count(price))", codes.NESTED_AGGREGATE),
    ("max(avg(qty) + 1)", codes.NESTED_AGGREGATE),
    ("price", codes.NOT_AN_AGGREGATE),
    ("sum(price) + 1", codes.NOT_AN_AGGREGATE),
    ("collect_list(symbol)", codes.NOT_AN_AGGREGATE),
    ("count(*)", codes.FORBIDDEN_SYNTAX),
    ("sum(_label)", codes.LABEL_REFERENCE),
    ("max(java_method('java.lang.Math', 'random'))", codes.FORBIDDEN_FUNCTION),
    ("sum(symbol)", codes.TYPE_MISMATCH),
    ("avg(price, qty)", codes.ARITY),
]


@pytest.mark.parametrize(
    "text, code", HOSTILE_EXPRESSIONS, ids=[t[:40] for t, _ in HOSTILE_EXPRESSIONS]
)
def test_hostile_expression_is_refused_with_its_code(text, code):
    with pytest.raises(DiagramInvalid) as caught:
        check_expression(text, SCHEMA, "boxes.f.where")
    assert caught.value.codes == [code]
    assert all(p.path == "boxes.f.where" for p in caught.value.problems)


@pytest.mark.parametrize("text, code", HOSTILE_AGGREGATES)
def test_hostile_aggregate_is_refused_with_its_code(text, code):
    with pytest.raises(DiagramInvalid) as caught:
        check_aggregate(text, SCHEMA, "boxes.a.aggregates.x")
    assert caught.value.codes == [code]


def test_corpus_is_large_and_covers_every_code():
    corpus = HOSTILE_EXPRESSIONS + HOSTILE_AGGREGATES
    assert len(corpus) >= 30
    documented = set(codes.in_group("expression")) | {codes.TOO_DEEP}  # the one depth limit
    assert documented == {code for _, code in corpus}


def test_refusing_the_corpus_never_loads_spark():
    """Checking is pure: the corpus is refused in a process where pyspark is never imported."""
    script = (
        "import json, sys\n"
        "from boxes.errors import DiagramInvalid\n"
        "from boxes.expressions import check_expression, check_aggregate\n"
        "from tests.boxes.expressions.test_expr_hostile import SCHEMA, HOSTILE_EXPRESSIONS, "
        "HOSTILE_AGGREGATES\n"
        "refused = 0\n"
        "for check, corpus in ((check_expression, HOSTILE_EXPRESSIONS), "
        "(check_aggregate, HOSTILE_AGGREGATES)):\n"
        "    for text, _ in corpus:\n"
        "        try:\n"
        "            check(text, SCHEMA, 'p')\n"
        "        except DiagramInvalid:\n"
        "            refused += 1\n"
        "print(json.dumps({'refused': refused, 'spark': any(m.startswith('pyspark') or "
        "m.startswith('py4j') for m in sys.modules)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=_project_root(),
    )
    assert json.loads(out.stdout) == {
        "refused": len(HOSTILE_EXPRESSIONS) + len(HOSTILE_AGGREGATES),
        "spark": False,
    }


def _project_root() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[3])
