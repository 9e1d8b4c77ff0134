"""A corpus of bad queries: each is refused with its code at its line and column (``cql.L.C``),
whether the CQL itself is wrong or the diagram it compiles to is (those problems are found by
the document's validator and located back in the CQL). Line 1 declares the stream."""

from __future__ import annotations

import re

import pytest

from boxes import codes
from boxes.cql import compile_cql, validate_cql
from boxes.errors import DiagramInvalid

STREAM = "CREATE STREAM s (t timestamp, k string, v long, x double) EVENT TIME t;\n"
CORPUS = [
    ("", codes.CQL_SYNTAX, "cql.1.1"),
    ("SELEC * FROM s", codes.CQL_SYNTAX, "cql.2.1"),
    ("SELECT * FROM", codes.CQL_SYNTAX, "cql.2.14"),
    ("SELECT FROM s", codes.CQL_SYNTAX, "cql.2.13"),
    ("SELECT * FROM s WHERE", codes.CQL_SYNTAX, "cql.2.22"),
    ("SELECT * FROM s [RANGE]", codes.CQL_SYNTAX, "cql.2.23"),
    ("SELECT * FROM s [RANGE 10 parsecs]", codes.CQL_SYNTAX, "cql.2.27"),
    ("SELECT * FROM s [ROWS ten]", codes.CQL_SYNTAX, "cql.2.23"),
    ("SELECT * FROM s [ROWS 10 SLIDE 2s]", codes.CQL_SYNTAX, "cql.2.33"),
    ("SELECT * FROM s [PARTITION k ROWS 3]", codes.CQL_SYNTAX, "cql.2.28"),
    ("SELECT * FROM s GROUP k", codes.CQL_SYNTAX, "cql.2.23"),
    ("SELECT a, FROM s", codes.CQL_SYNTAX, "cql.2.16"),
    ('SELECT * FROM s WHERE k = "it\'s"', codes.CQL_SYNTAX, "cql.2.27"),
    ("SELECT * FROM s; DROP TABLE s", codes.CQL_SYNTAX, "cql.2.18"),
    ("SELECT * FROM s WHERE v > 1 ORDER BY v", codes.CQL_SYNTAX, "cql.2.29"),
    ("ISTREAM SELECT * FROM s", codes.CQL_SYNTAX, "cql.2.9"),
    ("INSERT INTO SELECT * FROM s", codes.CQL_SYNTAX, "cql.2.20"),
    ("CREATE STREAM s (t) ; SELECT * FROM s", codes.CQL_SYNTAX, "cql.2.19"),
    ("INSERT SP INTO STREAM s LET DDP = TUPLES:[1]", codes.CQL_SYNTAX, "cql.2.44"),
    ("SELECT * FROM s WHERE v > 1 AT LEVEL 1", codes.CQL_SYNTAX, "cql.2.38"),
    ("RSTREAM(SELECT * FROM s)", codes.CQL_UNSUPPORTED, "cql.2.1"),
    ("DSTREAM(SELECT * FROM s)", codes.CQL_UNSUPPORTED, "cql.2.1"),
    ("SELECT * FROM s a, s b WHERE a.k = b.k", codes.CQL_WINDOW, "cql.2.15"),  # no [ROWS n]
    ("SELECT count(*) AS n FROM s [ROWS 10] GROUP BY nope", codes.UNKNOWN_FIELD, "cql.2.1"),
    (
        "SELECT * FROM s a [RANGE 1s] JOIN s b [RANGE 1s] ON a.k = b.v",
        codes.CQL_UNSUPPORTED,
        "cql.2.53",
    ),
    (
        "SELECT * FROM s a [RANGE 1s] JOIN s b [RANGE 1s] ON a.k > b.k",
        codes.CQL_UNSUPPORTED,
        "cql.2.53",
    ),
    (
        "SELECT count(*) AS n FROM s a [RANGE 1s] JOIN s b [RANGE 1s] ON a.k = b.k",
        codes.CQL_UNSUPPORTED,
        "cql.2.1",
    ),
    ("INSERT SP AS p INTO STREAM s LET p.SIGN = POSITIVE", codes.CQL_NOT_EXECUTABLE, "cql.2.1"),
    (
        "SELECT * FROM s ON RESULT(INSERT SP INTO STREAM LET SIGN = NEGATIVE)",
        codes.SP_INVALID,  # SRP = model:role is required
        "cql.2.27",
    ),
    ("SELECT * FROM s AT LEVEL [1, B]", codes.CQL_LEVEL, "cql.2.26"),
    (
        "SELECT count(*) FROM s [ROWS 10 WHERE level DOMINATED BY [T, T]]",
        codes.CQL_LEVEL,
        "cql.2.58",
    ),
    ("SELECT * FROM s AT LEVEL [banks: A, B]", codes.CQL_SYNTAX, "cql.2.26"),
    ("SELECT * FROM s AT LEVEL [banks: A, banks: B]", codes.CQL_LEVEL, "cql.2.26"),
    (
        "SELECT count(*) FROM s [ROWS 10 WHERE level DOMINATED BY [banks: A]] AT LEVEL [banks: B]",
        codes.CQL_LEVEL,
        "cql.2.58",
    ),
    (
        "SELECT count(*) AS n FROM s [ROWS 10 WHERE level DOMINATED BY [banks: A]]; "
        "INSERT INTO o2 SELECT * FROM s AT LEVEL [banks: B]",
        codes.CQL_LEVEL,
        "cql.2.116",
    ),
    ("SELECT count(*) FROM s", codes.CQL_WINDOW, "cql.2.22"),
    ("SELECT count(*) FROM s [NOW]", codes.CQL_WINDOW, "cql.2.24"),
    ("SELECT count(*) FROM s [RANGE UNBOUNDED]", codes.CQL_WINDOW, "cql.2.24"),
    ("SELECT * FROM s a [ROWS 5] JOIN s b [ROWS 5] ON a.k = b.k", codes.CQL_WINDOW, "cql.2.19"),
    ("SELECT * FROM s a [RANGE 1s] JOIN s b [RANGE 2s] ON a.k = b.k", codes.CQL_WINDOW, "cql.2.39"),
    (
        "SELECT * FROM s a [RANGE 1s SLIDE 1s] JOIN s b [RANGE 1s] ON a.k = b.k",
        codes.CQL_WINDOW,
        "cql.2.19",
    ),
    ("SELECT k, count(*) FROM s [PARTITION BY v ROWS 5] GROUP BY k", codes.CQL_WINDOW, "cql.2.27"),
    ("SELECT v, count(*) FROM s [RANGE 1s] GROUP BY k", codes.CQL_SELECT, "cql.2.8"),
    ("SELECT k AS kk, count(*) FROM s [RANGE 1s] GROUP BY k", codes.CQL_SELECT, "cql.2.8"),
    ("SELECT k FROM s [RANGE 1s] GROUP BY k", codes.CQL_SELECT, "cql.2.1"),
    ("SELECT v + 1 FROM s", codes.CQL_SELECT, "cql.2.8"),
    ("SELECT c.v FROM s", codes.CQL_UNKNOWN_NAME, "cql.2.8"),
    (
        "SELECT * FROM s a [RANGE 1s] JOIN s b [RANGE 1s] ON a.k = b.k WHERE c.v > 1",
        codes.CQL_UNKNOWN_NAME,
        "cql.2.69",
    ),
    ("SELECT * FROM s; SELECT * FROM s", codes.CQL_DUPLICATE_OUTPUT, "cql.2.18"),
    ("CREATE DIAGRAM d", codes.CQL_SYNTAX, "cql.1.1"),
    ("SELECT * FROM s WHERE nope > 1", codes.UNKNOWN_FIELD, "cql.2.23"),
    ("SELECT * FROM s WHERE v + 'a'", codes.TYPE_MISMATCH, "cql.2.23"),
    ("SELECT * FROM s WHERE exec('rm')", codes.FORBIDDEN_FUNCTION, "cql.2.23"),
    ("SELECT sum(k) AS n FROM s [RANGE 1s]", codes.TYPE_MISMATCH, "cql.2.8"),
    ("SELECT count(*) AS n FROM s [RANGE 1s SLIDE 2s]", codes.INVALID_DURATION, "cql.2.29"),
    ("SELECT count(*) AS n FROM s [ROWS 5 SLIDE 6]", codes.INVALID_COUNT, "cql.2.29"),
    ("SELECT count(*) AS n FROM s [ROWS 0]", codes.INVALID_COUNT, "cql.2.29"),
    ("SELECT count(*) AS n FROM s [RANGE 1s] HAVING m > 1", codes.UNKNOWN_FIELD, "cql.2.47"),
    ("SELECT * FROM nowhere", codes.MISSING_PARAMETER, "cql.2.15"),
    ("SELECT v AS w, x AS w FROM s", codes.CQL_SELECT, "cql.2.16"),
    ("CREATE VIEW s AS SELECT * FROM s; SELECT * FROM s", codes.CQL_DUPLICATE_VIEW, "cql.2.1"),
]


@pytest.mark.parametrize(("query", "code", "path"), CORPUS, ids=[q[:60] for q, _, _ in CORPUS])
def test_bad_query_is_refused_with_its_code_and_position(query, code, path):
    with pytest.raises(DiagramInvalid) as err:
        validate_cql(STREAM + query)
    problem = err.value.problems[0]
    assert (problem.code, problem.path) == (code, path)
    # the position is stated once, in the path (the editor shows it as "line L, column C"); an
    # sp's own message names it, as it must where an sp comes as data (SP_INVALID)
    if code != codes.SP_INVALID:
        assert "line " not in problem.message and "column" not in problem.message
    # and never in the grammar's words
    assert not re.search(
        r"\b(lsqb|rsqb|lpar|rpar|comma|comp_op|grammar__|\$end)\b", problem.message
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELECT a b FROM s", "expected ',', AS, FROM or an operator, found 'b'"),
        ("SELECT * FROM s WHERE (v > 1 ]", "expected ')' or an operator, found ']'"),
        ("SELECT * FROM s [ROWS 10 SLIDE 2s]", "expected ']' or WHERE, found 's'"),
        ("SELECT * FROM s WHERE v >", "the query ends too early: expected an expression"),
        ("SELECT * FROM s [", "the query ends too early: expected NOW, PARTITION, RANGE or ROWS"),
        ("SELECT * FROM s WHERE v ! 3", "found '!', which is no part of CQL"),
    ],
)
def test_a_syntax_error_says_in_words_what_was_expected(query, message):
    with pytest.raises(DiagramInvalid) as err:
        validate_cql(STREAM + query)
    assert [p.message for p in err.value.problems] == [message]


def test_the_corpus_is_large_and_every_code_is_registered():
    assert len(CORPUS) >= 40
    assert {code for _, code, _ in CORPUS} >= {
        c for c in vars(codes).values() if isinstance(c, codes.Code) and c.group == "cql"
    } - {codes.CQL_NOT_EXPRESSIBLE}


def test_nothing_reaches_spark_text_from_a_query():
    """An expression is only ever text checked by the expression language's allow-list."""
    doc = compile_cql("SELECT * FROM s WHERE v > 1")
    assert doc["boxes"]["out_where"] == {"type": "filter", "in": "s", "where": "v > 1"}
