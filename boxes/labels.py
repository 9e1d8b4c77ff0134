"""Source labels: which input streams a tuple derives from, as a bit vector in a reserved column.

Bit ``i`` stands for ``plan.inputs[i]``; it lives in word ``i // 64`` at bit ``i % 64`` (bit 63
is the sign bit of a long). With ``ceil(n / 64)`` words (at least one) the number of sources is
not capped. A one-word label (up to 64 sources, the common case) is a plain ``bigint`` column;
only a wider one is ``struct<w0: bigint, w1: bigint, ...>``: a struct costs every box, the
shuffle and the Arrow hand-over noticeably more than a long, even with one field.

Every box gets its label from here: an input attaches a literal, filter/map/union copy it,
an aggregate ORs the labels of its group word by word, a join ORs left and right, a count
window ORs the labels of the tuples in each window (``merge_ranges``, numpy on the Arrow batch
its stateful step receives). Everything else
is a native Spark expression (no Python UDF), and an input's label stays a plain literal (so
Spark could fold a readable-set test on it; ``tests/boxes/test_labels.py`` shows it). Outputs
check labels against a subscriber's rights on the Arrow batches instead (``secfilter.py``),
where the rights of the moment are known. A label is never NULL: ``bit_or`` skips NULLs and
would silently drop a source.

**Raw sources** (READ_AGGREGATE, Borealis' aggregate-read right): beside the sources a tuple
derives from, a label may say which of them it can reveal *raw* values of (raw ⊆ all). Where
nothing upstream of an output summarises its sources (``AggregateBox.aggregate_only``), raw ==
all and nothing more is carried. Otherwise the compiler decides, per output, to widen the label:
the raw words ride after the source words in the same column (``literal(..., raw=True)``), so
every box merges them word by word (OR) as it merges the sources, without knowing;
an aggregate-only aggregate clears them (``clear_raw``) and the output splits them off into
``_raw`` (``split_raw``). Layout of a label: ``[level word], source words, [raw words]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from boxes import codes
from boxes.ranges import range_reduce

LABEL_COLUMN = "_label"
RAW_COLUMN = "_raw"  # at an output whose label was widened: the sources it reveals raw values of
WORD_BITS = 64


def missing_field_code(name: str) -> codes.Code:
    """The code for naming a field that is not there: the label column has its own."""
    return codes.LABEL_REFERENCE if name == LABEL_COLUMN else codes.UNKNOWN_FIELD


def word_count(n_inputs: int) -> int:
    """Words needed for ``n_inputs`` sources (at least one, so an empty label still has a shape)."""
    return max(1, -(-n_inputs // WORD_BITS))


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


def _compose(parts: Sequence):
    """One label column from its words: the word itself, or a struct of several."""
    from pyspark.sql import functions as F

    if len(parts) == 1:
        return parts[0]
    return F.struct(*[part.alias(word_name(k)) for k, part in enumerate(parts)])


def _words(label, words: int) -> list:
    """The ``words`` word columns of a label column (the inverse of ``_compose``)."""
    return [label] if words == 1 else [label.getField(word_name(k)) for k in range(words)]


def _own(bit: int, words: int, raw: bool) -> list:
    """An input's own bit as word columns: the sources, and as many raw words if ``raw``."""
    from pyspark.sql import functions as F

    own = [F.lit(w).cast("long") for w in mask_words([bit], words)]
    return own + own if raw else own


def literal(bit: int, words: int, raw: bool = False):
    """The label of an input stream's tuples: only its own bit set (among the raw sources too,
    in a widened label: an input reveals its own values)."""
    return _compose(_own(bit, words, raw))


def words_of(frame) -> int:
    """How many label words a labelled DataFrame carries."""
    fields = getattr(frame.schema[LABEL_COLUMN].dataType, "fields", None)
    return 1 if fields is None else len(fields)


def label_column():
    from pyspark.sql import functions as F

    return F.col(LABEL_COLUMN)


def merge_group(words: int):
    """Aggregate expression: the OR of the labels of every tuple in the group."""
    from pyspark.sql import functions as F

    return _compose([F.bit_or(word) for word in _words(label_column(), words)])


def merge_pair(left, right, words: int):
    """The label of a joined tuple: left OR right, word by word."""
    return _compose(
        [a.bitwiseOR(b) for a, b in zip(_words(left, words), _words(right, words), strict=False)]
    )


def split(frame) -> list:
    """The label of ``frame`` as one long column per word (``w0``, ``w1``, ... aliased): the shape
    a Python step (a count window's state) works on."""
    words = words_of(frame)
    return [w.alias(word_name(k)) for k, w in enumerate(_words(label_column(), words))]


def join_words(columns: Sequence):
    """The label column from word columns (the inverse of ``split``)."""
    return _compose(list(columns))


def merge_ranges(words: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The OR of the labels (one label word per element of ``words``) in each range
    ``words[s : e + 1]``: a count window's label is the OR of its tuples' labels.

    >>> merge_ranges(np.array([1, 2, 4, 8]), np.array([0, 1]), np.array([1, 3])).tolist()
    [3, 14]
    """
    return range_reduce(np.bitwise_or, words.astype(np.int64), starts, ends, 0)


def moved(label, remap: Sequence[int], words: int) -> list:
    """Source words of this plan from a label of another plan (a derived input: the label
    another diagram's output carries): its bit ``i`` becomes bit ``remap[i]`` here, so every
    original source stays in the label. Shifts and masks, native Spark; the label unchanged
    when the two layouts agree."""
    from pyspark.sql import functions as F

    theirs = _words(label, word_count(len(remap)))
    if list(remap) == list(range(len(remap))) and len(theirs) == words:
        return theirs
    out: list = [None] * words
    for i, target in enumerate(remap):
        one = F.shiftright(theirs[i // WORD_BITS], i % WORD_BITS).bitwiseAND(F.lit(1).cast("long"))
        here = F.shiftleft(one, target % WORD_BITS)
        k = target // WORD_BITS
        out[k] = here if out[k] is None else out[k].bitwiseOR(here)
    return [F.lit(0).cast("long") if w is None else w for w in out]


def derived(label, remap: Sequence[int], words: int, raw: bool = False, level=None):
    """The label of a derived input's tuples: their sources' bits ``moved`` into this plan's
    layout (as raw words too if ``raw``: what this plan knows of them is that they may reveal
    any of their sources, the strictest reading), after the level word if ``level`` is given."""
    sources = moved(label, remap, words)
    parts = sources + sources if raw else sources
    return _compose(([level.cast("long")] if level is not None else []) + parts)


def with_level(bit: int, words: int, level, raw: bool = False):
    """The label of an input's tuples in a diagram at a level: the tuple's level label as the
    first word (``w0``), then the stream's own bit in ``words`` words (twice if ``raw``). Every
    box merges it word by word (OR), so the level merges exactly like the sources, with no box
    knowing."""
    return _compose([level.cast("long")] + _own(bit, words, raw))


def clear_raw(frame, words: int):
    """``frame`` with the raw words of its widened label set to 0: the output of an aggregate
    that reveals no tuple's value, so all its sources are aggregate-only."""
    from pyspark.sql import functions as F

    total = words_of(frame)
    parts = _words(label_column(), total)[: total - words] + [F.lit(0).cast("long")] * words
    return frame.withColumn(LABEL_COLUMN, _compose(parts))


def split_raw(frame, words: int):
    """A widened label back as the label (level and sources) and ``_raw`` (``words`` words)."""
    total = words_of(frame)
    parts = _words(label_column(), total)
    return frame.withColumn(RAW_COLUMN, _compose(parts[total - words :])).withColumn(
        LABEL_COLUMN, _compose(parts[: total - words])
    )


def split_level(frame, words: int, level_column: str):
    """A levelled label back as the source label (``words`` words) and the level column."""
    label = label_column()
    parts = _words(label, words + 1)
    return frame.withColumn(level_column, parts[0]).withColumn(LABEL_COLUMN, _compose(parts[1:]))
