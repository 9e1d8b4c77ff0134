"""The sources goal stays meaningful when the 64-source label cost is lost in the noise."""

from __future__ import annotations

from bench.harness import Comparison
from bench.sources import goal, label_cost


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
