"""Parse tree to checked tree: names against the schema, functions against the allow-list, types.

The checker keeps going after a problem so that a document's author sees every mistake at
once; a sub-expression that failed yields ``None`` and checks that depend on it are skipped
rather than reported twice. Untyped NULLs take the type their context needs, and long
operands meeting doubles are wrapped in explicit casts, so the checked tree is fully typed.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from contextvars import ContextVar

import lark

from boxes import codes
from boxes.errors import InvalidInput, Problem
from boxes.expressions import functions, geo
from boxes.expressions import nodes as n
from boxes.expressions import sqlvalues as sv
from boxes.expressions.aggregates import AGGREGATES
from boxes.levels import Lattice, signed
from boxes.types import TYPE_ALIASES, DataType, Schema

L, D, S, B, T = (
    DataType.LONG,
    DataType.DOUBLE,
    DataType.STRING,
    DataType.BOOLEAN,
    DataType.TIMESTAMP,
)
_CLASH = object()  # the types of a group of operands do not unify
_UNITS = {
    "microsecond": 1,
    "millisecond": 1_000,
    "second": 1_000_000,
    "minute": 60_000_000,
    "hour": 3_600_000_000,
    "day": 86_400_000_000,
    "week": 604_800_000_000,
}
_COMPARE = {"==": "=", "<>": "!="}
# ``_level`` (a tuple's Chinese-Wall level label, ``boxes/levels.py``) is readable, never
# written, in the expressions of a diagram that declares ``level:``; the document sets this
# while it checks such a diagram's boxes. Elsewhere it is reserved like every ``_`` name.
LEVEL_FIELD = "_level"
LEVEL_READABLE: ContextVar[bool] = ContextVar("level_readable", default=False)
# The companies a level literal (``LEVEL '[A, ⊥]'``) may name and their bits: the server's
# catalog, set with ``LEVEL_READABLE``; none without a catalog (``sluice run``).
LEVEL_LATTICE: ContextVar[Lattice | None] = ContextVar("level_lattice", default=None)
MAX_ROUND_DIGITS = 15


class Checker:
    """Checks one expression's parse tree; ``aggregate_code`` is what an aggregate call earns.

    Each grammar rule (or alias) ``r`` has a handler ``_r(tree, operands)``, where ``operands``
    are the rule's sub-trees without its keyword tokens.
    """

    def __init__(self, text: str, schema: Schema, path: str, aggregate_code: str) -> None:
        self.text, self.schema, self.path = text, schema, path
        self.aggregate_code = aggregate_code
        self.problems: list[Problem] = []

    def report(self, code: str, message: str) -> None:
        self.problems.append(Problem(code, self.path, message))

    def snippet(self, tree: lark.Tree | lark.Token) -> str:
        if isinstance(tree, lark.Token):
            return str(tree)
        return self.text[tree.meta.start_pos : tree.meta.end_pos]

    def top(self, tree: lark.Tree) -> n.Node | None:
        node = self.check(tree)
        if node is not None and node.type is None:
            self.report(codes.TYPE_MISMATCH, "NULL alone has no type; write CAST(NULL AS type)")
            return None
        return node

    def check(self, tree: lark.Tree) -> n.Node | None:
        return getattr(self, "_" + tree.data)(tree, _operands(tree))

    # literals and names

    def _int_lit(self, tree, _):
        value = int(tree.children[0])
        if value > sv.LONG_MAX:
            self.report(
                codes.INVALID_LITERAL, f"the integer {value} does not fit in a long (64 bits)"
            )
            return None
        return n.Lit(L, value)

    def _float_lit(self, tree, _):
        value = float(tree.children[0])
        if value in (float("inf"), float("-inf")):
            self.report(codes.INVALID_LITERAL, f"the number {tree.children[0]} is too large")
            return None
        return n.Lit(D, value)

    def _string_lit(self, tree, _):
        return n.Lit(S, _unquote(tree.children[0]))

    def _true_lit(self, tree, _):
        return n.Lit(B, True)

    def _false_lit(self, tree, _):
        return n.Lit(B, False)

    def _null_lit(self, tree, _):
        return n.Lit(None, None)

    def _timestamp_lit(self, tree, _):
        text = _unquote(tree.children[1])
        value = sv.parse_timestamp(text)
        if value is None:
            self.report(
                codes.INVALID_LITERAL,
                f"TIMESTAMP {text!r} is not a timestamp; expected 'YYYY-MM-DD HH:MM:SS'",
            )
            return None
        return n.Lit(T, value)

    def _level_lit(self, tree, _):
        """A level as the papers write it, as the bits of the companies it names: the label
        of a tuple at that level (with T, of one derived from every company of the class)."""
        text = _unquote(tree.children[1])
        lattice = LEVEL_LATTICE.get()
        if not LEVEL_READABLE.get() or lattice is None:
            why = (
                "is compared with _level, which only a diagram at a level reads"
                if not LEVEL_READABLE.get()
                else "names companies only the server's catalog knows; run the diagram there"
            )
            self.report(codes.INVALID_LITERAL, f"LEVEL {text!r} {why}")
            return None
        try:
            return n.Lit(L, signed(lattice.clearance(lattice.written(text))))
        except InvalidInput as err:
            self.report(err.code, f"LEVEL {text!r}: {err.message}")
            return None

    def _interval(self, tree, _):
        self.report(
            codes.TYPE_MISMATCH,
            "an INTERVAL can only be added to or subtracted from "
            f"a timestamp ({self.snippet(tree)})",
        )

    def _ref(self, tree, _):
        parts = [str(t) for t in tree.children[0].children]
        name = ".".join(parts)
        if name == LEVEL_FIELD and LEVEL_READABLE.get():
            return n.Ref(L, name)
        if name.startswith("_"):
            self.report(
                codes.LABEL_REFERENCE,
                f"{name!r} is reserved: names starting with '_' (such as the label "
                "column) cannot be read by expressions",
            )
            return None
        if len(parts) > 1:
            self.report(
                codes.FORBIDDEN_SYNTAX,
                f"qualified names such as {name!r} are not allowed; fields are plain names",
            )
            return None
        field = self.schema.get(name)
        if field is None:
            self.report(
                codes.UNKNOWN_FIELD,
                f"unknown field {name!r}"
                + _suggest(name, [f for f in self.schema.names if not f.startswith("_")]),
            )
            return None
        return n.Ref(field.type, name)

    # operators

    def _arith(self, tree, operands):
        left_tree, op, right_tree = tree.children
        op = str(op)
        if op in "+-" and (_is_interval(right_tree) or (op == "+" and _is_interval(left_tree))):
            return self._shift(tree, op, left_tree, right_tree)
        left, right = self.check(left_tree), self.check(right_tree)
        if left is None or right is None:
            return None
        if op == "-" and T in (left.type, right.type) and {left.type, right.type} <= {T, None}:
            return n.Elapsed(D, _coerce(left, T), _coerce(right, T))
        if not all(x.type is None or x.type.is_numeric for x in (left, right)):
            hint = " (use concat for text)" if op == "+" and S in (left.type, right.type) else ""
            self.report(
                codes.TYPE_MISMATCH,
                f"{op} needs numeric operands; got "
                f"{_name(left.type)} and {_name(right.type)} ({self.snippet(tree)}){hint}",
            )
            return None
        kind = D if op == "/" or D in (left.type, right.type) else L
        return n.Arith(kind, op, _coerce(left, kind), _coerce(right, kind))

    def _shift(self, tree, op, left_tree, right_tree):
        interval_tree, ts_tree = (
            (right_tree, left_tree) if _is_interval(right_tree) else (left_tree, right_tree)
        )
        ts = self.check(ts_tree)
        micros = self._interval_micros(interval_tree)
        if ts is None or micros is None:
            return None
        if ts.type not in (T, None):
            self.report(
                codes.TYPE_MISMATCH,
                f"an INTERVAL can only move a timestamp; got "
                f"{_name(ts.type)} ({self.snippet(tree)})",
            )
            return None
        return n.Shift(T, _coerce(ts, T), -micros if op == "-" else micros)

    def _interval_micros(self, tree) -> int | None:
        _, amount, unit = tree.children
        unit_name = str(unit).lower().removesuffix("s")
        if unit_name not in _UNITS:
            self.report(
                codes.INVALID_LITERAL,
                f"unknown INTERVAL unit {str(unit)!r}; expected "
                + ", ".join(u.upper() + "S" for u in _UNITS),
            )
            return None
        micros = int(amount) * _UNITS[unit_name]
        if micros > sv.LONG_MAX:
            self.report(codes.INVALID_LITERAL, f"INTERVAL {amount} {unit} is too long")
            return None
        return micros

    def _neg(self, tree, operands):
        child_tree = tree.children[1]
        if child_tree.data == "int_lit" and int(child_tree.children[0]) == -sv.LONG_MIN:
            return n.Lit(L, sv.LONG_MIN)
        operand = self.check(child_tree)
        if operand is None:
            return None
        if operand.type is not None and not operand.type.is_numeric:
            self.report(
                codes.TYPE_MISMATCH,
                f"unary - needs a number; got {_name(operand.type)} ({self.snippet(tree)})",
            )
            return None
        kind = operand.type or L
        return n.Neg(kind, _coerce(operand, kind))

    def _compare(self, tree, _):
        left_tree, op, right_tree = tree.children
        op = _COMPARE.get(str(op), str(op))
        sides = self._unified([left_tree, right_tree], f"{op} compares", tree)
        return None if sides is None else n.Compare(B, op, *sides)

    def _and_(self, tree, operands):
        return self._logic(tree, "AND", operands)

    def _or_(self, tree, operands):
        return self._logic(tree, "OR", operands)

    def _logic(self, tree, op, operands):
        checked = [self._boolean(t, f"{op} needs boolean operands", tree) for t in operands]
        return None if None in checked else n.Logic(B, op, *checked)

    def _not_(self, tree, operands):
        operand = self._boolean(operands[0], "NOT needs a boolean operand", tree)
        return None if operand is None else n.Not(B, operand)

    def _boolean(self, tree, need: str, whole) -> n.Node | None:
        node = self.check(tree)
        if node is None:
            return None
        if node.type not in (B, None):
            self.report(
                codes.TYPE_MISMATCH,
                f"{need}; got {_name(node.type)} ({self.snippet(tree)}) in {self.snippet(whole)}",
            )
            return None
        return _coerce(node, B)

    def _is_null(self, tree, operands):
        return self._null_test(operands[0], negated=False)

    def _is_not_null(self, tree, operands):
        return self._null_test(operands[0], negated=True)

    def _null_test(self, operand_tree, negated):
        operand = self.check(operand_tree)
        return (
            None if operand is None else n.IsNull(B, _coerce(operand, operand.type or S), negated)
        )

    def _in_(self, tree, operands):
        checked = self._unified(operands, "IN compares", tree)
        if checked is None:
            return None
        return n.In(B, checked[0], tuple(checked[1:]), _negated(tree))

    def _between(self, tree, operands):
        checked = self._unified(operands, "BETWEEN compares", tree)
        return None if checked is None else n.Between(B, *checked, _negated(tree))

    def _like(self, tree, operands):
        operand_tree, pattern_tree = operands
        operand = self.check(operand_tree)
        if pattern_tree.data != "string_lit":
            self.report(
                codes.INVALID_LITERAL,
                f"LIKE needs a literal 'pattern'; got {self.snippet(pattern_tree)}",
            )
            return None
        pattern = _unquote(pattern_tree.children[0])
        compiled = sv.like_regex(pattern)
        if isinstance(compiled, str):
            self.report(codes.INVALID_LITERAL, compiled)
            return None
        if operand is None:
            return None
        if operand.type not in (S, None):
            self.report(
                codes.TYPE_MISMATCH,
                f"LIKE needs a string; got {_name(operand.type)} ({self.snippet(operand_tree)})",
            )
            return None
        return n.Like(B, _coerce(operand, S), pattern, _negated(tree))

    def _case(self, tree, operands):
        whens, default = _case_parts(tree)
        conditions = [
            self._boolean(w.children[1], "WHEN needs a boolean condition", w) for w in whens
        ]
        return self._case_values(tree, conditions, whens, default)

    def _simple_case(self, tree, operands):
        whens, default = _case_parts(tree)
        subject_tree = next(c for c in tree.children if isinstance(c, lark.Tree))
        keys = self._unified([subject_tree, *(w.children[1] for w in whens)], "CASE compares", tree)
        conditions = (
            [n.Compare(B, "=", keys[0], key) for key in keys[1:]] if keys else [None] * len(whens)
        )
        return self._case_values(tree, conditions, whens, default)

    def _case_values(self, tree, conditions, whens, default_tree):
        value_trees = [w.children[3] for w in whens]
        values = self._unified(
            value_trees + ([default_tree] if default_tree else []),
            "CASE branches must share a type; they",
            tree,
        )
        if values is None or None in conditions:
            return None
        kind = values[0].type
        default = values[-1] if default_tree else n.Lit(kind, None)
        return n.Case(kind, tuple(zip(conditions, values[: len(whens)], strict=True)), default)

    def _cast(self, tree, operands):
        type_token = tree.children[3].children[0]
        target = TYPE_ALIASES.get(str(type_token).lower())
        operand = self.check(operands[0])
        if target is None:
            self.report(
                codes.UNKNOWN_TYPE,
                f"unknown type {str(type_token)!r} in CAST; expected "
                + ", ".join(t.value for t in DataType),
            )
            return None
        if operand is None:
            return None
        if operand.type is None:
            return n.Lit(target, None)
        if (operand.type, target) not in sv.CASTABLE:
            self.report(
                codes.TYPE_MISMATCH,
                f"cannot cast {operand.type.value} to {target.value} ({self.snippet(tree)})",
            )
            return None
        return operand if operand.type is target else n.Cast(target, operand)

    def _call(self, tree, operands):
        name_tree, *arg_trees = tree.children
        arg_trees = [a for a in arg_trees if a is not None]
        name = ".".join(str(t) for t in name_tree.children)
        lowered = name.lower()
        if functions.forbidden(name):
            self.report(
                codes.FORBIDDEN_FUNCTION,
                f"{name}() is forbidden: expressions may not "
                "reflect, run code, call UDFs, generate rows or read anything but "
                "the tuple",
            )
            return None
        if lowered in AGGREGATES:
            where = (
                "inside another aggregate"
                if self.aggregate_code == codes.NESTED_AGGREGATE
                else "here; aggregates belong in an aggregate box's 'aggregates'"
            )
            self.report(self.aggregate_code, f"{name}() is an aggregate and is not allowed {where}")
            return None
        spec = functions.lookup(name)
        if spec is None:
            self.report(
                codes.UNKNOWN_FUNCTION,
                f"unknown function {name}()"
                + _suggest(lowered, [*functions.FUNCTIONS, *functions.ALIASES]),
            )
            for arg_tree in arg_trees:
                self.check(arg_tree)
            return None
        if not spec.min_args <= len(arg_trees) <= spec.max_args:
            self.report(codes.ARITY, f"{lowered}() takes {_arity(spec)}; got {len(arg_trees)}")
            return None
        name = functions.canonical(name)
        args = [
            self._literal_arg(name, i, t) if i in spec.literals else self.check(t)
            for i, t in enumerate(arg_trees)
        ]
        if None in args:
            return None
        return self._typed_call(tree, name, spec, args, arg_trees)

    def _literal_arg(self, name, index, tree):
        if name == "point_in_polygon":
            return self._polygon(tree)
        if name == "date_trunc":
            unit = _unquote(tree.children[0]).lower() if tree.data == "string_lit" else None
            if unit not in functions.TRUNC_UNITS:
                self.report(
                    codes.INVALID_LITERAL,
                    "date_trunc needs a literal unit, one of "
                    + ", ".join(f"'{u}'" for u in functions.TRUNC_UNITS)
                    + f"; got {self.snippet(tree)}",
                )
                return None
            return n.Lit(S, unit)
        digits = int(tree.children[0]) if tree.data == "int_lit" else None
        if digits is None or digits > MAX_ROUND_DIGITS:
            self.report(
                codes.INVALID_LITERAL,
                f"{name}() needs a literal number of digits from 0 "
                f"to {MAX_ROUND_DIGITS}; got {self.snippet(tree)}",
            )
            return None
        return n.Lit(L, digits)

    def _polygon(self, tree):
        if tree.data != "string_lit":
            self.report(
                codes.INVALID_POLYGON,
                "point_in_polygon() needs a literal polygon such as "
                f"'103.6 1.2, 103.9 1.2, 103.9 1.4'; got {self.snippet(tree)}",
            )
            return None
        text = _unquote(tree.children[0])
        vertices = geo.parse_polygon(text)
        if isinstance(vertices, str):
            self.report(codes.INVALID_POLYGON, f"point_in_polygon(): {vertices}")
            return None
        return n.Lit(S, text)

    def _typed_call(self, tree, name, spec, args, arg_trees):
        groups: dict[str, DataType | None] = {}
        for kind in (functions.NUMERIC, functions.SAME):
            members = [a for i, a in enumerate(args) if spec.param(i) == kind]
            if not members:
                continue
            unified = _unify(members)
            if unified is _CLASH or (
                kind == functions.NUMERIC and unified is not None and not unified.is_numeric
            ):
                want = "numbers" if kind == functions.NUMERIC else "arguments of one type"
                self.report(
                    codes.TYPE_MISMATCH,
                    f"{name}() needs {want}; got "
                    + ", ".join(_name(a.type) for a in members)
                    + f" ({self.snippet(tree)})",
                )
                return None
            groups[kind] = unified or (L if kind == functions.NUMERIC else S)
        typed = []
        for i, (arg, arg_tree) in enumerate(zip(args, arg_trees, strict=True)):
            want = groups.get(spec.param(i), spec.param(i))
            if not _fits(arg.type, want):
                self.report(
                    codes.TYPE_MISMATCH,
                    f"{name}() expects {want.value} for argument "
                    f"{i + 1}; got {_name(arg.type)} ({self.snippet(arg_tree)})",
                )
                return None
            typed.append(_coerce(arg, want))
        result = groups.get(spec.result, spec.result)
        return n.Call(result, name, tuple(typed))

    def _unified(self, trees, what: str, whole) -> list[n.Node] | None:
        maybe = [self.check(t) for t in trees]
        checked = [c for c in maybe if c is not None]
        if len(checked) < len(maybe):
            return None
        kind = _unify(checked)
        if kind is _CLASH:
            kinds = {c.type for c in checked}
            hint = (
                "; write a timestamp as TIMESTAMP 'YYYY-MM-DD HH:MM:SS'" if {S, T} <= kinds else ""
            )
            self.report(
                codes.TYPE_MISMATCH,
                f"{what} values of different types: "
                + ", ".join(_name(c.type) for c in checked)
                + f" ({self.snippet(whole)}){hint}",
            )
            return None
        return [_coerce(c, kind or S) for c in checked]


def _operands(tree: lark.Tree) -> list[lark.Tree]:
    return [c for c in tree.children if isinstance(c, lark.Tree)]


def _negated(tree: lark.Tree) -> bool:
    return tree.children[1] is not None


def _case_parts(tree: lark.Tree) -> tuple[list[lark.Tree], lark.Tree | None]:
    whens = [c for c in tree.children if isinstance(c, lark.Tree) and c.data == "when"]
    default = tree.children[-2]
    return whens, default if isinstance(default, lark.Tree) else None


def _is_interval(tree) -> bool:
    return isinstance(tree, lark.Tree) and tree.data == "interval"


def _unquote(token: lark.Token) -> str:
    return str(token)[1:-1].replace("''", "'")


def _unify(nodes: Iterable[n.Node]):
    kinds = {x.type for x in nodes if x.type is not None}
    if len(kinds) <= 1:
        return next(iter(kinds), None)
    return D if kinds == {L, D} else _CLASH


def _fits(have: DataType | None, want: DataType) -> bool:
    return have is None or have is want or (have is L and want is D)


def _coerce(node: n.Node, kind: DataType) -> n.Node:
    if node.type is kind:
        return node
    if node.type is None:
        return n.Lit(kind, None)
    return n.Cast(kind, node)


def _name(kind: DataType | None) -> str:
    return "NULL" if kind is None else kind.value


def _arity(spec: functions.Function) -> str:
    if spec.variadic:
        return f"at least {spec.min_args} argument" + ("s" if spec.min_args != 1 else "")
    if spec.optional:
        return f"{spec.min_args} to {spec.max_args} arguments"
    return f"{spec.min_args} argument" + ("s" if spec.min_args != 1 else "")


def _suggest(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    close += [c for c in candidates if c.lower() == name.lower() and c not in close]
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
