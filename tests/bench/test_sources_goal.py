"""The sources goal stays meaningful when the 64-source label cost is lost in the noise, and its
plans number their label bits as real plans do."""

from __future__ import annotations

import pytest

from bench.harness import Comparison
from bench.sources import WIDTHS, goal, label_cost, widened
from boxes.input import InputBox
from boxes.labels import word_count


def test_label_cost_is_the_median_pair_difference_with_its_spread_as_noise_floor():
    pairs = Comparison(secured=(2.0, 3.0, 4.0, 5.0), unsecured=(1.0, 1.0, 1.0, 1.0))
    assert label_cost(pairs, 10**9) == (2.5, 1.5)


def test_a_cost_below_the_noise_floor_counts_as_the_floor():
    """A negative 64-source cost once printed "9116 vs -9 ns/tuple (infx)"."""
    missed = goal((100.0, 5.0), (-9.0, 40.0))
    assert not missed.met and "noise floor 40" in missed.measured and "2.5x" in missed.measured
    assert goal((70.0, 5.0), (-9.0, 40.0)).met


def test_a_cost_above_the_noise_floor_is_compared_as_measured():
    assert goal((100.0, 5.0), (60.0, 10.0)).met
    assert not goal((130.0, 5.0), (60.0, 10.0)).met


@pytest.mark.parametrize("width", WIDTHS)
def test_each_width_is_a_plan_numbering_its_bits_over_that_many_sorted_sources(width):
    """Bits are numbered per plan over its sorted sources, and the hand-over narrows a label
    to the plan's bits: two inputs given bits 0 and 63 in a plan of two sources failed it."""
    plan, mask = widened(width)
    sources = plan.label_sources
    assert len(sources) == width and list(sources) == sorted(sources)
    assert plan.label_words == word_count(width)
    bits = {box.name: box.bit for box in plan.boxes if isinstance(box, InputBox)}
    assert bits == {"a": 0, "b": width - 1}
    assert all(sources[bit] == name for name, bit in bits.items())
    assert int.from_bytes(mask.astype("<u8").tobytes(), "little") == 1 | 1 << (width - 1)
