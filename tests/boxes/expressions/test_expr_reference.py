"""The tests' Python reference covers exactly what the language allows, so it cannot drift."""

from __future__ import annotations

from boxes.expressions import aggregates, functions, sqlvalues
from tests.boxes.expressions.reference import evaluate, values
from tests.boxes.expressions.reference.functions import PYTHON


def test_every_allowed_function_has_a_reference():
    assert set(PYTHON) == set(functions.FUNCTIONS)


def test_every_aggregate_has_a_reference():
    assert set(evaluate._AGGREGATES) == set(aggregates.AGGREGATES)


def test_the_checker_allows_exactly_the_casts_the_reference_computes():
    identity = {(t, t) for t in sqlvalues.DataType}
    assert sqlvalues.CASTABLE == set(values._CASTS) | identity
