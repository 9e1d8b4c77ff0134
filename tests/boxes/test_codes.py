"""The error-code registry: every code raised is declared once, documented, with one status.

Two nets: errors and problems refuse an undeclared code when they are built, and a static scan
of the source finds codes written as free strings (which a raise-time check would only catch
on the paths a test happens to run).
"""

from __future__ import annotations

import ast
import importlib
import pickle
import re
from pathlib import Path

import pytest

from boxes import codes
from boxes.errors import (
    Conflict,
    Denied,
    DiagramInvalid,
    InvalidInput,
    NotFound,
    Problem,
    RateLimited,
    SluiceError,
    TooLarge,
    Unauthenticated,
    Unavailable,
)

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    p
    for layer in ("boxes", "catalog", "server")
    for p in (ROOT / layer).rglob("*.py")
    if not p.is_relative_to(ROOT / "boxes" / "codes")
)
CODE_SHAPE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$")
PROBLEM_MAKERS = {"Problem", "add", "report"}


def test_the_documentation_is_the_registry():
    doc = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert doc == codes.markdown(), "docs/errors.md is stale: run `make errors-doc`"


def test_every_constant_is_the_code_it_names():
    constants = {k: v for k, v in vars(codes).items() if isinstance(v, codes.Code)}
    assert constants == {name: codes.REGISTRY[name] for name in codes.REGISTRY}
    assert all(k == v for k, v in constants.items())


def test_each_group_is_declared_in_the_module_named_after_it():
    declared: set[str] = set()
    for group in codes.GROUPS:
        module = importlib.import_module(f"boxes.codes.{group}")
        found = {v for v in vars(module).values() if isinstance(v, codes.Code)}
        assert {code.group for code in found} == {group}, f"boxes/codes/{group}.py"
        declared |= found
    assert declared == set(codes.REGISTRY)


def test_a_code_is_its_name_on_the_wire():
    assert codes.NOT_FOUND == "NOT_FOUND" and codes.NOT_FOUND.status == 404
    assert NotFound(what="user", name="x").to_dict()["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    "build",
    [
        lambda: SluiceError("m", code="NO_SUCH_CODE"),
        lambda: InvalidInput("m", code="CYCLE"),
        lambda: Problem("STREAM_NOT_FOUND", "inputs.x", "m"),
        lambda: codes.lookup("INVALID_TUPLE"),
    ],
    ids=["error", "subclass", "problem", "lookup"],
)
def test_an_unregistered_code_is_refused_where_it_is_raised(build):
    with pytest.raises(LookupError, match="not a registered error code"):
        build()


@pytest.mark.parametrize(
    "cls, code",
    [
        (InvalidInput, codes.BATCH_TOO_LARGE),
        (Conflict, codes.NOT_FOUND),
        (SluiceError, codes.INVALID_NAME),
    ],
)
def test_a_code_is_raised_only_as_the_class_of_its_status(cls, code):
    with pytest.raises(TypeError, match=f"{code} answers {code.status}"):
        cls("m", code=code)


def test_the_message_comes_from_the_template_and_needs_every_parameter():
    assert str(NotFound(code=codes.UNKNOWN_USER, name="al")) == "[UNKNOWN_USER] no user named 'al'"
    assert (
        RateLimited(code=codes.INGEST_RATE_LIMITED, retry_after=2, per_second=5).message
        == "this session may send 5 tuples a second; slow down"
    )
    with pytest.raises(TypeError, match="needs parameter"):
        NotFound(code=codes.UNKNOWN_USER)


def test_an_error_survives_pickling_with_its_registered_code():
    error = pickle.loads(pickle.dumps(NotFound(code=codes.UNKNOWN_ROLE, name="R")))
    assert error.code is codes.UNKNOWN_ROLE and error.status == 404
    assert pickle.loads(pickle.dumps(Problem(codes.ARITY, "p", "m"))) == Problem("ARITY", "p", "m")


def test_a_code_is_declared_once():
    with pytest.raises(ValueError, match="declared twice"):
        codes.define("NOT_FOUND", 410, "gone", "general")
    assert codes.NOT_FOUND.status == 404


def test_every_error_class_default_is_registered_with_the_class_status():
    expected = {
        SluiceError: 503,
        InvalidInput: 400,
        DiagramInvalid: 400,
        Unauthenticated: 401,
        Denied: 403,
        NotFound: 404,
        Conflict: 409,
        TooLarge: 413,
        RateLimited: 429,
        Unavailable: 503,
    }
    assert {cls: codes.lookup(cls.code).status for cls in expected} == expected


def _free_codes(path: Path, root: Path = ROOT) -> list[str]:
    """Codes this file writes as strings instead of through ``boxes.codes``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')}"
        if (
            isinstance(node, ast.keyword)
            and node.arg == "code"
            and isinstance(node.value, ast.Constant)
        ):
            found.append(f"{where} code={node.value.value!r}")
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in PROBLEM_MAKERS
            and isinstance(node.args[0].value, str)
            and CODE_SHAPE.match(node.args[0].value)
        ):
            found.append(f"{where} problem {node.args[0].value!r}")
        elif (
            isinstance(node, ast.Assign)
            and any(getattr(t, "id", None) == "code" for t in node.targets)
            and isinstance(node.value, ast.Constant)
        ):
            found.append(f"{where} code = {node.value.value!r}")
        elif isinstance(node, ast.Constant) and node.value in codes.REGISTRY:
            found.append(f"{where} {node.value!r}")
        elif (
            isinstance(node, ast.Attribute)
            and getattr(node.value, "id", None) == "codes"
            and CODE_SHAPE.match(node.attr)
            and node.attr not in vars(codes)
        ):
            found.append(f"{where} codes.{node.attr} is not declared")
    return found


def test_no_source_file_writes_a_code_as_a_free_string():
    assert [hit for path in SOURCES for hit in _free_codes(path)] == []


def test_the_scan_finds_free_codes(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        'raise NotFound("x", code="NOPE")\nproblems.add("CYCLE", "p", "m")\n'
        'class E(SluiceError):\n    code = "X"\nif err.code == "NOT_FOUND": pass\n'
        'Problem(codes.UNKNOWN_STREAM, "p", "m")\n'
    )
    hits = {hit.split(" ", 1)[1] for hit in _free_codes(sample, tmp_path)}
    assert hits == {
        "code='NOPE'",
        "problem 'CYCLE'",
        "code = 'X'",
        "'NOT_FOUND'",
        "codes.UNKNOWN_STREAM is not declared",
    }


EXPECTED = re.compile(r"""code\W{0,4}\s*===?\s*["']([A-Z][A-Z0-9_]+)["']""")


def test_tests_and_web_pages_expect_only_registered_codes():
    files = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "web" / "js").rglob("*.js")]
    expected = {(f.name, m) for f in files for m in EXPECTED.findall(f.read_text("utf-8"))}
    assert expected, "the pattern finds the tests' expectations"
    assert {(f, m) for f, m in expected if m not in codes.REGISTRY} == set()
