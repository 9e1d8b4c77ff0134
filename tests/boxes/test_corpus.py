"""A corpus of bad diagrams, each answered with its own error code(s), without Spark.

Every case states the exact codes expected (not messages), so a change in how a mistake is
reported is a visible change. A last test runs the whole corpus in a fresh interpreter and
proves the validator never imported Spark, so no Spark job can have started.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from boxes.document import MAX_BOXES, load_document, validate
from boxes.errors import DiagramInvalid
from boxes.types import parse_schema

HEADER = """version: 1
name: q
schemas:
  s: {fields: {t: timestamp, k: string, v: long}, event_time: t}
  p: {fields: {k: string, v: long}}
"""


def doc(
    boxes: str = "",
    outputs: str = "o: {from: f}",
    inputs: str = "in1: {schema: s}",
    header: str = HEADER,
) -> str:
    """A document from its sections' YAML lines (indented two spaces by this function)."""

    def section(name: str, body: str) -> str:
        lines = [line for line in body.strip().splitlines()]
        return f"{name}:\n" + "".join(f"  {line}\n" for line in lines) if lines else ""

    return (
        header + section("inputs", inputs) + section("boxes", boxes) + section("outputs", outputs)
    )


FILTER = "f: {type: filter, in: in1, where: v > 1}"
TWO = "in1: {schema: s}\nin2: {schema: s}"
CATALOG = {
    "in1": parse_schema(
        {"fields": {"t": "timestamp", "k": "string", "v": "long"}, "event_time": "t"}, "c"
    )[0]
}

CASES: list[tuple[str, str, list[str]]] = [
    ("yaml syntax", "version: 1\nname: [q\n", ["DOCUMENT_SYNTAX"]),
    ("not a mapping", "- a\n- b\n", ["DOCUMENT_SYNTAX"]),
    (
        "yaml alias bomb",
        "a: &a [x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefghij", "bcdefghijk", strict=False)
        ),
        ["DOCUMENT_SYNTAX"],
    ),
    ("duplicate yaml key", doc(FILTER + "\n" + FILTER), ["DUPLICATE_NAME"]),
    ("version 2", doc(FILTER).replace("version: 1", "version: 2"), ["UNSUPPORTED_VERSION"]),
    ("version missing", doc(FILTER).replace("version: 1\n", ""), ["MISSING_PARAMETER"]),
    ("unknown section", doc(FILTER) + "extras: 1\n", ["UNKNOWN_PARAMETER"]),
    ("bad diagram name", doc(FILTER).replace("name: q", "name: 9lives"), ["INVALID_NAME"]),
    ("no outputs", doc(FILTER, outputs=""), ["MISSING_PARAMETER"]),
    ("section not a mapping", doc(outputs="o: {from: in1}") + "boxes: [a, b]\n", ["WRONG_TYPE"]),
    ("box not a mapping", doc("f: filter"), ["WRONG_TYPE"]),
    ("box without type", doc("f: {in: in1, where: v > 1}"), ["MISSING_PARAMETER"]),
    ("unknown box type", doc("f: {type: sieve, in: in1}"), ["UNKNOWN_BOX_TYPE"]),
    (
        "input declared as a box",
        doc("f: {type: input}", outputs="o: {from: in1}"),
        ["UNKNOWN_BOX_TYPE", "UNREACHABLE"],
    ),
    ("missing where", doc("f: {type: filter, in: in1}"), ["MISSING_PARAMETER"]),
    (
        "unknown parameter",
        doc("f: {type: filter, in: in1, where: v > 1, when: now}"),
        ["UNKNOWN_PARAMETER"],
    ),
    ("where not text", doc("f: {type: filter, in: in1, where: [v]}"), ["WRONG_TYPE"]),
    ("in names nothing", doc("f: {type: filter, in: nope, where: v > 1}"), ["UNKNOWN_INPUT"]),
    ("output from nothing", doc(FILTER + "\n", outputs="o: {from: nope}"), ["UNKNOWN_INPUT"]),
    (
        "box reads an output",
        doc(
            FILTER + "\ng: {type: filter, in: o, where: v > 2}",
            outputs="o: {from: f}\no2: {from: g}",
        ),
        ["UNKNOWN_INPUT"],
    ),
    (
        "box named like an input",
        doc("in1: {type: filter, in: in1, where: v > 1}", outputs="o: {from: in1}"),
        ["DUPLICATE_NAME"],
    ),
    ("output named like a box", doc(FILTER, outputs="f: {from: f}"), ["DUPLICATE_NAME"]),
    (
        "bad box name",
        doc("bad-name: {type: filter, in: in1, where: v > 1}", outputs="o: {from: in1}"),
        ["INVALID_NAME"],
    ),
    (
        "box name too long",
        doc(f"{'b' * 65}: {{type: filter, in: in1, where: v > 1}}", outputs="o: {from: in1}"),
        ["INVALID_NAME"],
    ),
    (
        "cycle",
        doc(
            "a: {type: filter, in: b, where: v > 1}\nb: {type: filter, in: a, where: v > 1}\n"
            "f: {type: union, in: [a, in1]}"
        ),
        ["DIAGRAM_CYCLE"],
    ),
    ("self loop", doc("f: {type: filter, in: f, where: v > 1}"), ["DIAGRAM_CYCLE", "UNREACHABLE"]),
    (
        "unreachable box",
        doc(FILTER + "\ng: {type: filter, in: in1, where: v > 2}"),
        ["UNREACHABLE"],
    ),
    ("unused input", doc(FILTER, inputs=TWO), ["UNREACHABLE"]),
    (
        "union of different schemas",
        doc("f: {type: union, in: [in1, in2]}", inputs="in1: {schema: s}\nin2: {schema: p}"),
        ["SCHEMA_MISMATCH"],
    ),
    ("union of one", doc("f: {type: union, in: [in1]}"), ["TOO_FEW_INPUTS"]),
    ("union in not a list", doc("f: {type: union, in: in1}"), ["WRONG_TYPE"]),
    ("unknown field", doc("f: {type: filter, in: in1, where: price > 1}"), ["UNKNOWN_FIELD"]),
    ("predicate not boolean", doc("f: {type: filter, in: in1, where: v + 1}"), ["TYPE_MISMATCH"]),
    ("expression syntax", doc("f: {type: filter, in: in1, where: v >}"), ["EXPR_SYNTAX"]),
    (
        "label in an expression",
        doc("f: {type: filter, in: in1, where: _label = 1}"),
        ["LABEL_REFERENCE"],
    ),
    ("label as a map field", doc("f: {type: map, in: in1, fields: {_label: v}}"), ["INVALID_NAME"]),
    (
        "forbidden function",
        doc("f: {type: map, in: in1, fields: {x: \"reflect('a', 'b')\"}}"),
        ["FORBIDDEN_FUNCTION"],
    ),
    (
        "aggregate in a map",
        doc("f: {type: map, in: in1, fields: {x: sum(v)}}"),
        ["AGGREGATE_NOT_ALLOWED"],
    ),
    (
        "aggregate without event time",
        doc(
            "f: {type: aggregate, in: in1, window: {size: 10s}, aggregates: {n: count()}}",
            inputs="in1: {schema: p}",
        ),
        ["NO_EVENT_TIME"],
    ),
    (
        "bad window size",
        doc("f: {type: aggregate, in: in1, window: {size: 10 parsecs}, aggregates: {n: count()}}"),
        ["INVALID_DURATION"],
    ),
    (
        "slide longer than size",
        doc(
            "f: {type: aggregate, in: in1, window: {size: 5s, slide: 10s}, "
            "aggregates: {n: count()}}"
        ),
        ["INVALID_DURATION"],
    ),
    (
        "window without size",
        doc("f: {type: aggregate, in: in1, window: {slide: 5s}, aggregates: {n: count()}}"),
        ["WINDOW_KIND"],
    ),
    (
        "group by unknown field",
        doc(
            "f: {type: aggregate, in: in1, window: {size: 10s}, group_by: [sym], "
            "aggregates: {n: count()}}"
        ),
        ["UNKNOWN_FIELD"],
    ),
    (
        "group by the label",
        doc(
            "f: {type: aggregate, in: in1, window: {size: 10s}, group_by: [_label], "
            "aggregates: {n: count()}}"
        ),
        ["LABEL_REFERENCE"],
    ),
    (
        "join on the label",
        doc("f: {type: join, left: in1, right: in2, on: [_label], within: 5s}", inputs=TWO),
        ["LABEL_REFERENCE", "LABEL_REFERENCE"],
    ),
    (
        "not an aggregate",
        doc("f: {type: aggregate, in: in1, window: {size: 10s}, aggregates: {n: v + 1}}"),
        ["NOT_AN_AGGREGATE"],
    ),
    (
        "sum of text",
        doc("f: {type: aggregate, in: in1, window: {size: 10s}, aggregates: {n: sum(k)}}"),
        ["TYPE_MISMATCH"],
    ),
    (
        "aggregate name clash",
        doc(
            "f: {type: aggregate, in: in1, window: {size: 10s}, group_by: [k], "
            "aggregates: {k: count()}}"
        ),
        ["DUPLICATE_FIELD"],
    ),
    (
        "event time lost by a map",
        doc(
            "m: {type: map, in: in1, fields: {x: v}}\n"
            "f: {type: aggregate, in: m, window: {size: 10s}, aggregates: {n: count()}}"
        ),
        ["NO_EVENT_TIME"],
    ),
    (
        "join on unknown field",
        doc("f: {type: join, left: in1, right: in2, on: [sym], within: 5s}", inputs=TWO),
        ["UNKNOWN_FIELD", "UNKNOWN_FIELD"],
    ),
    (
        "join without event time",
        doc(
            "f: {type: join, left: in1, right: in2, on: [k], within: 5s}",
            inputs="in1: {schema: s}\nin2: {schema: p}",
        ),
        ["NO_EVENT_TIME"],
    ),
    (
        "join without bound",
        doc("f: {type: join, left: in1, right: in2, on: [k]}", inputs=TWO),
        ["JOIN_BOUND"],  # neither `within` nor `rows`
    ),
    (
        "join keys of different types",
        doc(
            "f: {type: join, left: in1, right: in2, on: [v], within: 5s}",
            inputs="in1: {schema: s}\nin2: {schema: {fields: {t: timestamp, "
            "v: string}, event_time: t}}",
        ),
        ["TYPE_MISMATCH"],
    ),
    (
        "join name clash after prefixing",
        doc(
            "f: {type: join, left: in1, right: in2, on: [k], within: 5s}",
            inputs="in1: {schema: {fields: {t: timestamp, k: string, "
            "right_t: long}, event_time: t}}\nin2: {schema: s}",
        ),
        ["DUPLICATE_FIELD"],
    ),
    ("unknown schema", doc(FILTER, inputs="in1: {schema: nope}"), ["UNKNOWN_SCHEMA"]),
    ("input without schema", doc(FILTER, inputs="in1: {lateness: 1s}"), ["MISSING_PARAMETER"]),
    (
        "unknown field type",
        doc(FILTER, inputs="in1: {schema: {fields: {v: decimal}}}"),
        ["UNKNOWN_TYPE"],
    ),
    (
        "event time not a timestamp",
        doc(FILTER, inputs="in1: {schema: {fields: {v: long}, event_time: v}}"),
        ["TYPE_MISMATCH"],
    ),
    ("bad lateness", doc(FILTER, inputs="in1: {schema: s, lateness: soon}"), ["INVALID_DURATION"]),
    (
        "too many boxes",
        doc(
            "\n".join(f"b{i}: {{type: filter, in: in1, where: v > 1}}" for i in range(MAX_BOXES))
            + "\n"
            + FILTER,
            outputs="\n".join(f"o{i}: {{from: b{i}}}" for i in range(MAX_BOXES)) + "\no: {from: f}",
        ),
        ["TOO_MANY_BOXES"],
    ),
]
SERVER_CASES: list[tuple[str, str, list[str]]] = [
    (
        "input not in the catalog",
        doc("f: {type: union, in: [in1, in9]}", inputs="in1: {}\nin9: {}"),
        ["NOT_FOUND"],
    ),
    (
        "schema differs from the catalog",
        doc(FILTER, inputs="in1: {schema: p}"),
        ["SCHEMA_MISMATCH"],
    ),
]


def _codes(text: str, streams=None) -> list[str]:
    with pytest.raises(DiagramInvalid) as err:
        validate(load_document(text), streams)
    return err.value.codes


def test_the_corpus_is_large():
    assert len(CASES) + len(SERVER_CASES) >= 40


@pytest.mark.parametrize("text, codes", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_diagram_gets_its_codes(text, codes):
    assert sorted(_codes(text)) == sorted(codes)


@pytest.mark.parametrize(
    "text, codes", [c[1:] for c in SERVER_CASES], ids=[c[0] for c in SERVER_CASES]
)
def test_bad_diagram_against_the_catalog_gets_its_codes(text, codes):
    assert sorted(_codes(text, CATALOG)) == sorted(codes)


PURITY_CHECK = """
import json, sys
from boxes.document import load_document, validate
from boxes.errors import DiagramInvalid
answers = []
for text in json.load(sys.stdin):
    try:
        validate(load_document(text))
        answers.append(None)
    except DiagramInvalid as err:
        answers.append(err.codes)
spark = sorted(m for m in sys.modules if "pyspark" in m or "py4j" in m)
print(json.dumps({"answers": answers, "spark": spark}))
"""


def test_validation_never_touches_spark():
    """A fresh interpreter validates the whole corpus without importing pyspark or py4j."""
    texts = [text for _, text, _ in CASES]
    done = subprocess.run(
        [sys.executable, "-c", PURITY_CHECK],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result = json.loads(done.stdout)
    assert result["spark"] == []
    assert [sorted(a) for a in result["answers"]] == [sorted(codes) for _, _, codes in CASES]
