"""docs/errors.md: every code with its status and template, group by group."""

import re

from boxes.codes.registry import GROUPS, Code, in_group

_QUOTED = re.compile(r"\{(\w+)!r\}")


def _shown(template: str) -> str:
    return _QUOTED.sub(r"'{\1}'", template)


def _shown_public(code: Code) -> str:
    shown = _shown(code.template)
    for name in sorted(code.private):
        shown = shown.replace("{" + name + "}", "{" + name + "} *(logged)*")
    return shown


def markdown() -> str:
    """``docs/errors.md``: every code with its status and template, group by group."""
    out = [
        "# Error codes",
        "",
        "Generated from `boxes/codes/` by `make errors-doc`; a test fails when the two differ.",
        "",
        'Every error answers `{"error": {"code", "message", "details"}}`, over HTTP '
        "and in socket.io",
        "acks alike. The status is the HTTP status of an answer whose code it "
        "is; a code that names",
        "one problem of a diagram comes inside `DIAGRAM_INVALID` (400), in `details.problems`.",
        "`{name}` in a message is a parameter. A 5xx answer carries `details.incident`, the id",
        "under which the server log holds what went wrong; parameters marked *(logged)* are",
        "shown to the client as that pointer, never as their value (paths, Java errors).",
        "",
    ]
    for group, title in GROUPS.items():
        out += [f"## {title}", "", "| code | status | message |", "|---|---|---|"]
        out += [f"| `{c}` | {c.status} | {_shown_public(c)} |" for c in in_group(group)]
        out.append("")
    return "\n".join(out)
