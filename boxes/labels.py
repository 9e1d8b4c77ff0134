"""Source labels: which input streams a tuple derives from, in a reserved column.

Bit ``i`` stands for ``plan.inputs[i]``. Up to 64 sources (the common case) a label is one
``bigint`` column: bit ``i`` of the word (bit 63 is the sign bit of a long). Above, a label is
**sparse**: an ``array<int>`` of the indexes of its set bits, sorted and distinct, so a tuple
from one of 4096 sources carries one int, not 64 words (64 words per tuple cost Spark, the
shuffle and the Arrow hand-over ten times the tuple itself; ``docs/benchmarks.md``). Dense
words are still the label's *layout*: the sparse set holds the positions of the bits the words
would have set (word ``k`` bit ``b`` is index ``64 k + b``), so every other part of a label
below works the same on both.

Every box gets its label from here: an input attaches a literal, filter/map/union copy it,
an aggregate ORs the labels of its group (``bit_or``; a sparse one the union of its tuples'
sets: ``collect_set``, ``flatten``, ``array_distinct``, ``sort_array``), a join ORs left and
right (``array_union``), a count window ORs the labels of the tuples in each window
(``merge_ranges``, numpy on the dense words its stateful step receives: ``split`` and
``join_words`` convert at that boundary). Everything else is a native Spark expression (no
Python UDF), and an input's label stays a plain literal (so Spark could fold a readable-set
test on it; ``tests/boxes/test_labels.py`` shows it). Outputs check labels against a
subscriber's rights on the Arrow batches instead (``secfilter.py``), where the rights of the
moment are known. A label is never NULL: ``bit_or`` skips NULLs and would silently drop a
source.

**Raw sources** (READ_AGGREGATE, Borealis' aggregate-read right): beside the sources a tuple
derives from, a label may say which of them it can reveal *raw* values of (raw ⊆ all). Where
nothing upstream of an output summarises its sources (``AggregateBox.aggregate_only``), raw ==
all and nothing more is carried. Otherwise the compiler decides, per output, to widen the label:
the raw words ride after the source words in the same column (``literal(..., raw=True)``), so
every box merges them word by word (OR) as it merges the sources, without knowing;
an aggregate-only aggregate clears them (``clear_raw``) and the output splits them off into
``_raw`` (``split_raw``). Layout of a label: ``[level word], source words, [raw words]``: one
``bigint``, or a struct of such parts (``w0``, ``w1``, ...) when there are several. A sparse
label has at most two parts: the level word (a diagram at a level) and one sparse set of the
source and raw words' bits; that set's column carries how many words it spans as metadata
(``words_of``), which only a count window's dense boundary needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from boxes import codes
from boxes.ranges import range_reduce

LABEL_COLUMN = "_label"
RAW_COLUMN = "_raw"  # at an output whose label was widened: the sources it reveals raw values of
DENIED_COLUMN = "_sp_denied"  # the roles sps deny a tuple (boxes/punctuations/columns.py)
HIDDEN_COLUMN = "_sp_hidden"  # per field, the roles sps hide it from (boxes/punctuations/fields.py)
NOGRANT_COLUMN = "_sp_nogrant"  # the roles without the grant option on a result (ON RESULT)
# the label columns no subscriber ever receives (the level is shown decoded, ``boxes/levels.py``)
RESERVED = (LABEL_COLUMN, RAW_COLUMN, DENIED_COLUMN, HIDDEN_COLUMN, NOGRANT_COLUMN)
GRANT_PREFIX = "_sp_g"  # an input's grant word per field set: roles without the grant option
NOBODY = -1  # a grant word where nobody holds the grant option (all roles lack it)
WORD_BITS = 64
_SPAN = "sluice.sparse_words"  # a sparse label's metadata: the words its set stands for


def missing_field_code(name: str) -> codes.Code:
    """The code for naming a field that is not there: the label column has its own."""
    return codes.LABEL_REFERENCE if name == LABEL_COLUMN else codes.UNKNOWN_FIELD


def word_count(n_inputs: int) -> int:
    """Words needed for ``n_inputs`` sources (at least one, so an empty label still has a shape)."""
    return max(1, -(-n_inputs // WORD_BITS))


def is_sparse(words: int) -> bool:
    """Whether a label of ``words`` source words is sparse (above 64 sources)."""
    return words > 1


def word_name(k: int) -> str:
    return f"w{k}"


def _signed(word: int) -> int:
    """The unsigned 64-bit pattern ``word`` as the signed long Spark stores."""
    return word - (1 << 64) if word >= (1 << 63) else word


def mask_words(bits: Iterable[int], words: int) -> list[int]:
    """Signed 64-bit words with the given bit positions set."""
    out = [0] * words
    for bit in bits:
        if not 0 <= bit < words * WORD_BITS:
            raise ValueError(f"bit {bit} does not fit in {words} label words")
        out[bit // WORD_BITS] |= 1 << (bit % WORD_BITS)
    return [_signed(w) for w in out]


def label_column():
    from pyspark.sql import functions as F

    return F.col(LABEL_COLUMN)


def _long(value):
    from pyspark.sql import functions as F

    return F.lit(value).cast("long")


def _named(label, span: int | None, name: str = LABEL_COLUMN):
    """``label`` as the named column, with its sparse set's span as metadata if it has one."""
    return label.alias(name) if span is None else label.alias(name, metadata={_SPAN: span})


def _compose(parts: Sequence, span: int | None = None, name: str = LABEL_COLUMN):
    """One label column from its parts: the part itself, or a struct of several."""
    from pyspark.sql import functions as F

    if len(parts) == 1:
        return _named(parts[0], span, name)
    return _named(F.struct(*[part.alias(word_name(k)) for k, part in enumerate(parts)]), span, name)


def _kinds(frame, name: str = LABEL_COLUMN) -> list[bool]:
    """Per part of ``frame``'s label, whether it is a sparse set (else one word)."""
    from pyspark.sql.types import ArrayType, StructType

    dtype = frame.schema[name].dataType
    types = [f.dataType for f in dtype.fields] if isinstance(dtype, StructType) else [dtype]
    return [isinstance(t, ArrayType) for t in types]


def _span(frame, name: str = LABEL_COLUMN) -> int | None:
    """The words a sparse label's set stands for (None: a dense label)."""
    if not any(_kinds(frame, name)):
        return None
    span = frame.schema[name].metadata.get(_SPAN)
    if span is None:
        raise ValueError(f"a sparse label lost its {_SPAN} metadata")
    return int(span)


def _parts(label, count: int) -> list:
    """The ``count`` part columns of a label column (the inverse of ``_compose``)."""
    return [label] if count == 1 else [label.getField(word_name(k)) for k in range(count)]


def _own(bit, words: int, raw: bool) -> list:
    """An input's own bit as parts: the sources, and the raw sources too if ``raw``. ``bit`` is
    the bit, or a column of each tuple's bit (inputs read as one scan: ``boxes/scan.py``)."""
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if is_sparse(words):
        own = [F.lit(bit)] + ([F.lit(words * WORD_BITS + bit)] if raw else [])
        return [F.array(*own)]
    if isinstance(bit, Column):  # one word (a dense label): the bit's place in it
        own = [F.call_function("shiftleft", _long(1), bit)]
    else:
        own = [_long(w) for w in mask_words([bit], words)]
    return own + own if raw else own


def _own_span(words: int, raw: bool) -> int | None:
    return words * (2 if raw else 1) if is_sparse(words) else None


def literal(bit, words: int, raw: bool = False):
    """The label of an input stream's tuples: only its own bit set (among the raw sources too,
    in a widened label: an input reveals its own values)."""
    return _compose(_own(bit, words, raw), _own_span(words, raw))


def with_head(bit, words: int, head: Sequence, raw: bool = False):
    """The label of an input's tuples with per-tuple words first: in a diagram at a level the
    tuple's level label (``w0``), in a plan governed by sps the roles its policy denies
    (``boxes.punctuations.columns``), then the stream's own bit (twice if ``raw``). Every box
    merges it part by part with OR, so these words merge exactly like the sources, with no box
    knowing (the OR of denied roles is the complement of the AND of the granted ones)."""
    return _compose([w.cast("long") for w in head] + _own(bit, words, raw), _own_span(words, raw))


def moved(label, remap: Sequence[int], words: int) -> list:
    """Source parts of this plan from a label of another plan (a derived input: the label
    another diagram's output carries): its bit ``i`` becomes bit ``remap[i]`` here, so every
    original source stays in the label. Native Spark: shifts and masks between words, or the
    indexes mapped through ``remap`` when this plan's label is sparse; the label unchanged when
    the two layouts agree. (A sparse upstream means more than 64 sources, so this plan's label
    is sparse too.)"""
    from pyspark.sql import functions as F

    theirs_sparse = is_sparse(word_count(len(remap)))
    if list(remap) == list(range(len(remap))) and theirs_sparse == is_sparse(words):
        return [label]
    if is_sparse(words):
        targets = F.array(*[F.lit(t) for t in remap])
        if theirs_sparse:
            return [F.sort_array(F.transform(label, lambda x: F.element_at(targets, x + 1)))]

        def is_set(_, i):
            return F.call_function("shiftright", label, i).bitwiseAND(_long(1)) == 1

        return [F.sort_array(F.filter(targets, is_set))]
    out = _long(0)
    for i, target in enumerate(remap):
        one = F.shiftright(label, i).bitwiseAND(_long(1))
        out = out.bitwiseOR(F.shiftleft(one, target))
    return [out]


def derived(label, remap: Sequence[int], words: int, raw: bool = False, head: Sequence = ()):
    """The label of a derived input's tuples: their sources' bits ``moved`` into this plan's
    layout (as raw sources too if ``raw``: what this plan knows of them is that they may reveal
    any of their sources, the strictest reading), after the ``head`` words (``with_head``)."""
    from pyspark.sql import functions as F

    (sources,) = moved(label, remap, words)
    if not raw:
        parts = [sources]
    elif is_sparse(words):
        shifted = F.transform(sources, lambda x: x + words * WORD_BITS)
        parts = [F.sort_array(F.array_union(sources, shifted))]
    else:
        parts = [sources, sources]
    return _compose([w.cast("long") for w in head] + parts, _own_span(words, raw))


def words_of(frame) -> int:
    """How many label words a labelled DataFrame's label stands for (a sparse set counts the
    words it spans)."""
    kinds = _kinds(frame)
    return len(kinds) + ((_span(frame) or 1) - 1 if any(kinds) else 0)


def _union(parts):
    """The sorted, distinct union of sparse sets (arrays)."""
    from pyspark.sql import functions as F

    merged = parts[0]
    for part in parts[1:]:
        merged = F.array_union(merged, part)
    return F.sort_array(merged)


def merge_group(frame):
    """Aggregate expression (named ``_label``): the OR of the labels of every tuple in the
    group; of sparse sets, the union of the distinct sets the group holds."""
    from pyspark.sql import functions as F

    kinds = _kinds(frame)
    parts = [
        F.sort_array(F.array_distinct(F.flatten(F.collect_set(part)))) if sparse else F.bit_or(part)
        for part, sparse in zip(_parts(label_column(), len(kinds)), kinds, strict=True)
    ]
    return _compose(parts, _span(frame))


def merge_pair(left, right, frame):
    """The label of a joined tuple (named ``_label``): left OR right, part by part (``frame``:
    either side, for the label's shape)."""
    kinds = _kinds(frame)
    pairs = zip(_parts(left, len(kinds)), _parts(right, len(kinds)), kinds, strict=True)
    parts = [_union([a, b]) if sparse else a.bitwiseOR(b) for a, b, sparse in pairs]
    return _compose(parts, _span(frame))


def _bit_of(x):
    from pyspark.sql import functions as F

    return F.call_function("shiftleft", _long(1), x % WORD_BITS)


def _dense(part, span: int) -> list:
    """A sparse set as its ``span`` words (longs)."""
    from pyspark.sql import functions as F

    def word(k: int):
        return lambda acc, x: F.when(F.shiftright(x, 6) == k, acc.bitwiseOR(_bit_of(x))).otherwise(
            acc
        )

    return [F.aggregate(part, _long(0), word(k)) for k in range(span)]


def _sparse(words: Sequence):
    """Words (longs) as a sparse set: the indexes of their set bits, ascending."""
    from pyspark.sql import functions as F

    def bits(k: int, word):
        indexes = F.array(*[F.lit(k * WORD_BITS + b) for b in range(WORD_BITS)])
        return F.when(word == 0, F.array().cast("array<int>")).otherwise(
            F.filter(indexes, lambda x: word.bitwiseAND(_bit_of(x)) != 0)
        )

    return F.flatten(F.array(*[bits(k, word) for k, word in enumerate(words)]))


def split(frame) -> list:
    """The label of ``frame`` as one long column per word (``w0``, ``w1``, ... aliased): the
    shape a Python step (a count window's state) works on; a sparse set becomes its words."""
    kinds, span = _kinds(frame), _span(frame)
    words: list = []
    for part, sparse in zip(_parts(label_column(), len(kinds)), kinds, strict=True):
        words += _dense(part, span or 1) if sparse else [part]
    return [w.alias(word_name(k)) for k, w in enumerate(words)]


def join_words(columns: Sequence, frame):
    """The label column (named ``_label``) from word columns (the inverse of ``split`` on
    ``frame``, whose label gives the shape)."""
    kinds, span = _kinds(frame), _span(frame)
    parts, at = [], 0
    for sparse in kinds:
        width = span or 1 if sparse else 1
        parts.append(_sparse(columns[at : at + width]) if sparse else columns[at])
        at += width
    return _compose(parts, span)


def merge_ranges(words: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The OR of the labels (one label word per element of ``words``) in each range
    ``words[s : e + 1]``: a count window's label is the OR of its tuples' labels.

    >>> merge_ranges(np.array([1, 2, 4, 8]), np.array([0, 1]), np.array([1, 3])).tolist()
    [3, 14]
    """
    return range_reduce(np.bitwise_or, words.astype(np.int64), starts, ends, 0)


def _select(part, low: int, high: int | None = None, shift: int = 0):
    """The indexes of a sparse set in ``[low, high)``, less ``shift``."""
    from pyspark.sql import functions as F

    kept = F.filter(part, lambda x: x >= low if high is None else (x >= low) & (x < high))
    return kept if shift == 0 else F.transform(kept, lambda x: x - shift)


def clear_raw(frame, words: int):
    """``frame`` with the raw words of its widened label set to 0: the output of an aggregate
    that reveals no tuple's value, so all its sources are aggregate-only."""
    kinds, span = _kinds(frame), _span(frame)
    parts = _parts(label_column(), len(kinds))
    if kinds[-1]:
        parts[-1] = _select(parts[-1], 0, words * WORD_BITS)
    else:
        parts = parts[: len(parts) - words] + [_long(0)] * words
    return frame.withColumn(LABEL_COLUMN, _compose(parts, span))


def split_raw(frame, words: int):
    """A widened label back as the label (level and sources) and ``_raw`` (``words`` words)."""
    kinds = _kinds(frame)
    parts = _parts(label_column(), len(kinds))
    if kinds[-1]:
        source, raw = _select(parts[-1], 0, words * WORD_BITS), words * WORD_BITS
        label, raws = parts[:-1] + [source], [_select(parts[-1], raw, None, raw)]
        span: int | None = words
    else:
        label, raws, span = parts[: len(parts) - words], parts[len(parts) - words :], None
    return frame.withColumn(RAW_COLUMN, _compose(raws, span, RAW_COLUMN)).withColumn(
        LABEL_COLUMN, _compose(label, span)
    )


def split_level(frame, level_column: str):
    """A label's first word off into its own column (the level: the inverse of
    ``with_head``), the rest staying the label."""
    kinds = _kinds(frame)
    parts = _parts(label_column(), len(kinds))
    return frame.withColumn(level_column, parts[0]).withColumn(
        LABEL_COLUMN, _compose(parts[1:], _span(frame))
    )


def split_policy(
    frame,
    words: int,
    row: int | None,
    hidden: Sequence[tuple[str, int]],
    grant: int | None = None,
    width: int = 1,
):
    """A governed plan's ``words`` policy words (``width`` parts each: one ``bigint``, or an
    ``array<bigint>`` of role words, ``boxes/punctuations/words.py``) off the label's head (the
    inverse of ``with_head``) as an output's columns (``boxes/punctuations/fields.py``):
    ``_sp_denied``, word 0 OR the ``row`` word; ``_sp_hidden``, the word of each field
    ``hidden`` names (none: no column); and ``_sp_nogrant``, the ``grant`` word, for an output
    that relabels its results (``boxes/punctuations/results.py``)."""
    from pyspark.sql import functions as F

    kinds = _kinds(frame)
    parts = _parts(label_column(), len(kinds))

    def word(k: int) -> list:
        return parts[k * width : (k + 1) * width]

    def column(ws: list):
        return ws[0] if width == 1 else F.array(*ws)

    denied = (
        word(0)
        if row is None
        else [a.bitwiseOR(b) for a, b in zip(word(0), word(row), strict=True)]
    )
    frame = frame.withColumn(DENIED_COLUMN, column(denied))
    if hidden:
        shown = [column(word(k)).alias(name) for name, k in hidden]
        frame = frame.withColumn(HIDDEN_COLUMN, F.struct(*shown))
    if grant is not None:
        frame = frame.withColumn(NOGRANT_COLUMN, column(word(grant)))
    return frame.withColumn(LABEL_COLUMN, _compose(parts[words * width :], _span(frame)))
