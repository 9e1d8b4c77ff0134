"""The audit trail: who did what to which object, when, whether it was allowed, and why.

Entries are written in the same transaction as the change they describe, so the log and the
catalog never disagree; denials and failed logins, which change nothing, get their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from catalog import repository

MAX_LIMIT = 1000


@dataclass(frozen=True)
class Entry:
    id: int
    at: float
    user: str | None
    roles: tuple[str, ...]
    event: str
    object: str | None
    allowed: bool
    reason: str
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "user": self.user,
            "roles": list(self.roles),
            "event": self.event,
            "object": self.object,
            "allowed": self.allowed,
            "reason": self.reason,
            "details": self.details,
        }


def record(
    conn,
    *,
    at: float,
    user: str | None,
    roles: Iterable[str],
    event: str,
    object: str | None,
    allowed: bool,
    reason: str,
    details: dict | None = None,
) -> None:
    repository.insert_audit(
        conn,
        {
            "at": at,
            "user_name": user,
            "roles": ",".join(sorted(roles)),
            "event": event,
            "object": object,
            "allowed": int(allowed),
            "reason": reason,
            "details": json.dumps(details or {}, sort_keys=True),
        },
    )


def query(
    conn,
    *,
    user: str | None = None,
    event: str | None = None,
    object: str | None = None,
    allowed: bool | None = None,
    since: float | None = None,
    until: float | None = None,
    before_id: int | None = None,
    limit: int = 100,
) -> list[Entry]:
    """Newest first; ``before_id`` pages back. Filters combine with AND; ``since`` and
    ``until`` bound the time (``since <= at < until``)."""
    rows = repository.audit_rows(
        conn,
        {
            "user_name": user,
            "event": event,
            "object": object,
            "allowed": None if allowed is None else int(allowed),
        },
        since,
        until,
        before_id,
        max(1, min(int(limit), MAX_LIMIT)),
    )
    return [
        Entry(i, at, u, tuple(r.split(",")) if r else (), e, o, bool(a), why, json.loads(d))
        for i, at, u, r, e, o, a, why, d in rows
    ]
