"""The registry's machinery: a code, its groups, and how one is declared and looked up.

Only ``boxes/codes/`` declares codes; everyone else imports them from ``boxes.codes``.
"""

from __future__ import annotations

import string
from typing import Any

GROUPS = {
    "general": "General",
    "http": "Requests, sessions and the server's set-up",
    "catalog": "Catalog: users, roles, objects and permissions",
    "document": "Diagram documents and boxes",
    "expression": "Expressions (see docs/expressions.md)",
    "ingest": "Ingestion and the durable log",
    "runtime": "Running diagrams",
    "cql": "The CQL dialect (see docs/cql.md); the path is cql.LINE.COLUMN",
    "policy": "Access-control policies and query rewriting (seed 002, docs/rewrite.md)",
}


class Code(str):
    """One registered code: compares equal to its name; carries status and template."""

    status: int
    template: str
    group: str
    private: frozenset[str]

    def __new__(
        cls, name: str, status: int, template: str, group: str, private: frozenset[str]
    ) -> Code:
        code = super().__new__(cls, name)
        code.status, code.template, code.group = status, template, group
        code.private = private
        return code

    def __reduce__(self):
        """Pickled (an error crossing to a Spark worker) as its name, unpickled as the one entry."""
        return lookup, (str(self),)

    @property
    def parameters(self) -> list[str]:
        """The template's named parameters, in order (``{name!r}`` gives ``name``)."""
        return [field for _, field, _, _ in string.Formatter().parse(self.template) if field]

    def render(self, **params: Any) -> str:
        """The message: the template with ``params`` filled in; a missing one is a bug."""
        missing = set(self.parameters) - set(params)
        if missing:
            raise TypeError(f"code {self} needs parameter(s) {', '.join(sorted(missing))}")
        return self.template.format(**params)

    def render_public(self, params: dict[str, Any], incident: str) -> str:
        """The message a client may see of the server's own failure: private parameters (paths,
        Java and Python error texts), and any not given, point to the log's incident instead.

        >>> from boxes.codes import DEPLOY_FAILED
        >>> DEPLOY_FAILED.render_public({"diagram": "q1", "reason": "OutOfMemoryError"}, "ab12")
        "diagram 'q1' could not start: see incident ab12 in the server log"
        """
        hidden = _Hidden(f"see incident {incident} in the server log")
        shown = {
            p: params[p] if p in params and p not in self.private else hidden
            for p in self.parameters
        }
        return self.template.format(**shown)


class _Hidden(str):
    """A placeholder that prints the same with ``!r`` as without."""

    def __repr__(self) -> str:
        return str(self)


REGISTRY: dict[str, Code] = {}


def define(
    name: str, status: int, template: str, group: str, private: tuple[str, ...] = ()
) -> Code:
    """Register a code; a name declared twice is refused (one code, one status). ``private``
    parameters are for the server log only (see ``Code.render_public``)."""
    if name in REGISTRY:
        raise ValueError(f"error code {name} is declared twice")
    if group not in GROUPS or not name.isupper() or status not in range(400, 600):
        raise ValueError(f"error code {name}: bad group {group!r} or status {status}")
    REGISTRY[name] = code = Code(name, status, template, group, frozenset(private))
    return code


def lookup(name: str) -> Code:
    """The registered code named ``name``; ``LookupError`` for a name nobody declared."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise LookupError(f"{name!r} is not a registered error code (boxes/codes/)") from None


def in_group(group: str) -> list[Code]:
    return [code for code in REGISTRY.values() if code.group == group]
