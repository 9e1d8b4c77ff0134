"""Dominance and LUB on random COI configurations against a reference written from 000's
Definitions 3-4 (vectors of ⊥ / company / T compared entry by entry, no bits)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from boxes import levels
from boxes.levels import BOTTOM, TOP


def ref_dominates(high, low) -> bool:
    """Definition 4: low ≼ high iff for every class low = high, low = ⊥ or high = T."""
    return all(a == b or a == BOTTOM or b == TOP for a, b in zip(low, high, strict=True))


def ref_lub(a, b):
    """Per class: ⊥ with x is x; equal entries stay; T or two different companies give T."""
    return tuple(
        y if x == BOTTOM else x if y == BOTTOM or x == y else TOP for x, y in zip(a, b, strict=True)
    )


@st.composite
def configs(draw):
    # Classes of two or more companies: T means two or more (Definition 3).
    sizes = draw(st.lists(st.integers(2, 4), min_size=1, max_size=4))
    lattice = levels.Lattice.of(
        {f"COI{i}": [f"c{i}_{j}" for j in range(n)] for i, n in enumerate(sizes)}
    )

    def level():
        return tuple(
            draw(st.sampled_from([BOTTOM, TOP, *[f"c{i}_{j}" for j in range(n)]]))
            for i, n in enumerate(sizes)
        )

    return lattice, level(), level(), level()


@given(configs())
def test_dominance_matches_definition_4(config):
    lattice, a, b, _ = config
    assert lattice.dominates(a, b) == ref_dominates(a, b)
    assert lattice.dominates(b, a) == ref_dominates(b, a)


@given(configs())
def test_lub_matches_and_is_least(config):
    lattice, a, b, c = config
    lub = lattice.lub(a, b)
    assert lub == ref_lub(a, b)
    assert lattice.dominates(lub, a) and lattice.dominates(lub, b)
    if ref_dominates(c, a) and ref_dominates(c, b):
        assert lattice.dominates(c, lub)
    # The level of the OR of two labels is the LUB of their levels (labels merge by OR).
    assert lattice.level(lattice.clearance(a) | lattice.clearance(b)) == lub
