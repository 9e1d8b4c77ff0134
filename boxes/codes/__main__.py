"""``python -m boxes.codes`` prints docs/errors.md (``make errors-doc``)."""

from boxes.codes import markdown

print(markdown(), end="")
