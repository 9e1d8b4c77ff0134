"""The read masks every delivered batch reads (``source_rights``) are updated per change for
the roles it touches only (``catalog/snapshot.py``); after any sequence of catalog changes they
must equal the masks of a snapshot rebuilt from every row."""

from __future__ import annotations

import random

import pytest

from boxes.errors import SluiceError
from catalog import Action, ObjectType
from catalog.core import load

T, A = ObjectType, Action
ROLES = ["R0", "R1", "R2", "R3"]
ACTIONS = [A.READ_TUPLE, A.READ_AGGREGATE, A.VIEW_OBJECT]


def rebuilt(cat):
    with cat.core.store.transaction() as conn:
        return load(conn)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_masks_after_random_changes_equal_a_rebuilt_snapshot(cat, admin, seed):
    rng = random.Random(seed)
    cat.objects.add_schema(admin, "s", {"fields": {"x": "long"}})
    roles, streams, made = set(), [], 0
    for step in range(150):
        op = rng.choice(["role", "stream", "grant", "revoke", "transfer", "drop", "drop_role"])
        try:
            if op == "role" or not roles:
                role = rng.choice(ROLES)
                if role not in roles:
                    cat.accounts.add_role(admin, role)
                    roles.add(role)
            elif op == "stream" or not streams:
                name = f"in{made}"
                cat.objects.add_stream(admin, name, "s")
                cat.objects.transfer(admin, T.STREAM, name, rng.choice(sorted(roles)))
                streams.append(name)
                made += 1
            elif op in ("grant", "revoke"):
                change = cat.grants.grant if op == "grant" else cat.grants.revoke
                change(
                    admin,
                    rng.choice(sorted(roles)),
                    rng.choice(ACTIONS),
                    T.STREAM,
                    rng.choice(streams),
                )
            elif op == "transfer":
                cat.objects.transfer(
                    admin, T.STREAM, rng.choice(streams), rng.choice(sorted(roles))
                )
            elif op == "drop":
                cat.objects.drop(admin, T.STREAM, streams.pop(rng.randrange(len(streams))))
            else:
                role = rng.choice(sorted(roles))
                cat.accounts.delete_role(admin, role)
                roles.discard(role)
        except SluiceError:
            pass  # refused (a role owning objects, a revoke of nothing): nothing changed
        fresh, kept = rebuilt(cat), cat.core.snapshot
        assert (kept.read_masks, kept.aggregate_masks) == (
            fresh.read_masks,
            fresh.aggregate_masks,
        ), (
            step,
            op,
        )
        assert kept.read_rights == fresh.read_rights, (step, op)
    assert any(cat.core.snapshot.read_masks.values()) and streams  # the sequence did something
