"""Administrators' changes to system settings, kept in the catalog so that they outlive a restart.

The catalog keeps only what an administrator changed; the server owns the settings, their
defaults (its config file and environment) and their validation. A change of several settings
is one transaction: each is stored and audited with its old and new value, or none is.

>>> cat.system.change(joe, {"max_batch_tuples": 500, "login_attempts_per_minute": None},
...                   defaults={"max_batch_tuples": 10_000, "login_attempts_per_minute": 10})
{'max_batch_tuples': 500, 'login_attempts_per_minute': 10}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boxes import codes
from boxes.errors import InvalidInput
from catalog import repository
from catalog.core import Core
from catalog.model import Subject

EVENT = "system_settings"
RESET = None  # the value that gives a setting back to its default


class SystemSettings:
    def __init__(self, core: Core) -> None:
        self.core = core

    def stored(self) -> dict[str, Any]:
        """Every setting an administrator changed and did not reset: what the server applies
        over its defaults when it starts (it reads its own configuration, so no session)."""
        with self.core.store.reader() as conn:
            return repository.load_system_settings(conn)

    def change(
        self, subject: Subject, changes: Mapping[str, Any], defaults: Mapping[str, Any]
    ) -> dict[str, Any]:
        """For an administrator (CHANGE_SYSTEM), store ``changes`` (``None`` resets a setting to
        its default) and audit each, in one transaction. Returns every setting of ``defaults``
        as now in force."""
        unknown = sorted(set(changes) - set(defaults))
        if unknown:
            raise InvalidInput(
                f"not a changeable setting: {', '.join(unknown)[:200]}",
                code=codes.UNKNOWN_SETTING,
                details={"settings": unknown[:20]},
            )
        core = self.core
        with core.store.lock:
            core.require_admin(subject, EVENT)
            with core.store.transaction() as conn:
                stored = repository.load_system_settings(conn)
                for name, value in sorted(changes.items()):
                    old = stored.get(name, defaults[name])
                    if value is RESET:
                        stored.pop(name, None)
                        repository.delete_system_setting(conn, name)
                        marks = {"reset": True}
                    else:
                        stored[name] = value
                        repository.set_system_setting(
                            conn, name, value, subject.user_name, core.clock()
                        )
                        marks = {}
                    core.log(
                        subject,
                        EVENT,
                        "system:system",
                        True,
                        "CHANGE_SYSTEM",
                        conn,
                        setting=name,
                        old=old,
                        new=stored.get(name, defaults[name]),
                        **marks,
                    )
        return {name: stored.get(name, default) for name, default in defaults.items()}
