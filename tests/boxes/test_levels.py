"""Chinese-Wall levels: the papers' own examples (seed 000 sections 3, 4, 6; seed 001 section 3).

Every expected answer below is worked out by hand from the papers' rules and the MessageLog rows
here, not taken from running the code. The Spark tests run the queries as native DataFrame plans
(batch: the rows are the whole stream so far); a time window spanning every row stands in for
``[ROWS 100]`` where the papers' point is not the count itself.
"""

from __future__ import annotations

import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F

from boxes import codes, levels, secfilter
from boxes.errors import InvalidInput
from boxes.levels import BOTTOM as B0
from boxes.levels import TOP as T

# 000 section 4 / 001 section 3: COI1 = {1, 2}, COI2 = {A, B, C}.
CLOUD = levels.Lattice.of({"COI1": ["1", "2"], "COI2": ["A", "B", "C"]})


def test_section3_dominance_examples():
    """000 §3: [5,⊥,⊥] ≼ [5,⊥,2] ≼ [5,⊥,T]; [5,⊥,⊥] and [⊥,⊥,2] are incomparable."""
    # Three classes with 5, 3 and 2 companies; company names are distinct across classes.
    lat = levels.Lattice.of(
        {"COI1": ["a1", "a2", "a3", "a4", "a5"], "COI2": ["b1", "b2", "b3"], "COI3": ["c1", "c2"]}
    )
    low, mid, high, other = ("a5", B0, B0), ("a5", B0, "c2"), ("a5", B0, T), (B0, B0, "c2")
    assert lat.dominates(mid, low) and lat.dominates(high, mid) and lat.dominates(high, low)
    assert not lat.dominates(low, mid) and not lat.dominates(mid, high)
    assert not lat.dominates(low, other) and not lat.dominates(other, low)
    assert lat.dominates(lat.trusted(), high) and lat.dominates(low, lat.public())
    assert not lat.dominates(lat.public(), low)


def test_company_names_must_be_distinct_across_classes():
    with pytest.raises(InvalidInput) as caught:
        levels.Lattice.of({"COI1": ["1", "2"], "COI2": ["2"]})
    assert caught.value.code == codes.LEVEL_BAD_CLASSES


def test_001_dominance_table():
    """001 §3 (Fig. 2 example, COI2 read as {A, B, C} here): [1,⊥] ≼ [1,B] and ≼ [1,T]; [2,⊥]
    (the paper prints [⊥,2], a typo: 2 is in COI1) ≼ [T,T] and incomparable with [1,⊥]."""
    assert CLOUD.dominates(("1", "B"), ("1", B0))
    assert CLOUD.dominates(("1", T), ("1", B0))
    assert CLOUD.dominates((T, T), ("2", B0))
    assert not CLOUD.dominates(("1", B0), ("2", B0))
    assert not CLOUD.dominates(("2", B0), ("1", B0))
    assert CLOUD.dominates(("1", T), ("1", "B")) and not CLOUD.dominates(("1", "B"), ("1", T))
    assert not CLOUD.dominates((B0, "B"), (B0, T))


def test_lub_of_three_competitors_is_top():
    """000 §6: max over tuples at [⊥,A], [⊥,B], [⊥,C] is at [⊥,T]; different classes combine."""
    assert CLOUD.lub((B0, "A"), (B0, "B"), (B0, "C")) == (B0, T)
    assert CLOUD.lub((B0, "A"), (B0, "B")) == (B0, T)
    assert CLOUD.lub(("1", B0), (B0, "B")) == ("1", "B")
    assert CLOUD.lub(("1", B0), ("1", B0)) == ("1", B0)
    assert CLOUD.lub() == CLOUD.public()


def test_complementing_interest_refuses_a_foreign_company():
    """A level names at most one company per class, and only one of that class (Definition 2)."""
    with pytest.raises(InvalidInput) as caught:
        CLOUD.clearance(("A", B0))
    assert caught.value.code == codes.LEVEL_UNKNOWN_COMPANY
    with pytest.raises(InvalidInput) as caught:
        CLOUD.clearance(("1",))
    assert caught.value.code == codes.LEVEL_BAD_SHAPE


# MessageLog (000 §4.1): each tuple's level is its sender's organisation, set by the system.
# "Broker" belongs to no company: its tuples are public.
ROWS = [
    # serviceId, msgType, sender, receiver, timestamp, outcome
    ("5", "send", "Company1", "CompanyB", 1, "success"),  # r1 [1,⊥]
    ("5", "receive", "CompanyB", "Company1", 2, "success"),  # r2 [⊥,B]
    ("6", "send", "Company1", "CompanyB", 3, "failure"),  # r3 [1,⊥]
    ("7", "send", "Company2", "CompanyB", 4, "failure"),  # r4 [2,⊥]
    ("8", "send", "CompanyA", "CompanyC", 5, "failure"),  # r5 [⊥,A]
    ("9", "send", "CompanyC", "CompanyA", 6, "failure"),  # r6 [⊥,C]
    ("5", "send", "Company1", "CompanyB", 7, "success"),  # r7 [1,⊥]
    ("7", "send", "Company2", "CompanyB", 8, "success"),  # r9 [2,⊥]
    ("5", "receive", "CompanyB", "Company1", 9, "success"),  # r8 [⊥,B]
    ("11", "send", "Broker", "CompanyB", 10, "failure"),  # r10 public
]


def _org_mask(sender: str) -> int:
    company = sender.removeprefix("Company")
    return CLOUD.company_mask(company) if company in CLOUD.bits else 0


@pytest.fixture(scope="module")
def message_log(spark):
    rows = [(*row, _org_mask(row[2])) for row in ROWS]
    frame = spark.createDataFrame(
        rows,
        "serviceId string, msgType string, sender string, receiver string, "
        f"ts long, outcome string, {levels.LEVEL_COLUMN} long",
    )
    return frame.withColumn("timestamp", F.timestamp_seconds("ts"))


def at(frame, level):
    return levels.at_level(frame, CLOUD.clearance(level))


def stamps(frame) -> list[int]:
    return sorted(row.ts for row in frame.select("ts").collect())


def send(outcome: str):
    return (F.col("msgType") == "send") & (F.col("outcome") == outcome)


def test_q1_q2_company_tier(message_log):
    """Q1/Q2 at [1,⊥]: only Company1's and public tuples (r9/r4 of Company2 are not seen)."""
    mine = at(message_log, ("1", B0))
    assert stamps(mine.where(send("success") & (F.col("receiver") == "CompanyB"))) == [1, 7]
    assert stamps(mine.where(send("failure") & (F.col("receiver") == "CompanyB"))) == [3, 10]
    # Without the level the same predicate reads Company2's tuples too.
    everything = message_log.where(send("success") & (F.col("receiver") == "CompanyB"))
    assert stamps(everything) == [1, 7, 8]


def test_q3_q4_service_tier(message_log):
    """Q3 at [⊥,B] sees only B's and public tuples; Q4 at [⊥,T] all of COI2 and public."""
    q3 = at(message_log, (B0, "B")).where(send("failure") & (F.col("receiver") == "CompanyB"))
    assert stamps(q3) == [10]
    receivers = F.col("receiver").isin("CompanyA", "CompanyB", "CompanyC")
    assert stamps(at(message_log, (B0, T)).where(send("failure") & receivers)) == [5, 6, 10]


def _window_min_max(frame, *keys):
    return frame.groupBy(F.window("timestamp", "1 minute"), *keys).agg(
        F.min("ts").alias("lo"), F.max("ts").alias("hi"), levels.merge_group().alias("lvl")
    )


def test_q5_min_max_carries_the_lub(message_log):
    """Q5 at [1,B], serviceId 5 successes: r1, r2, r7, r8 → min 1, max 9, level [1,B]."""
    q5 = at(message_log, ("1", "B")).where(
        (F.col("outcome") == "success") & (F.col("serviceId") == "5")
    )
    [row] = _window_min_max(q5).collect()
    assert (row.lo, row.hi, CLOUD.level(row.lvl)) == (1, 9, ("1", "B"))


def test_q6_join_delay_at_1b(message_log):
    """Q6 at [1,B]: sends r1, r7 × receives r2, r8 on serviceId 5 → delays 1, 8, -5, 2 at [1,B]."""
    visible = at(message_log, ("1", "B"))
    s = visible.where(
        send("success") & (F.col("sender") == "Company1") & (F.col("receiver") == "CompanyB")
    ).alias("S")
    r = visible.where(
        (F.col("msgType") == "receive")
        & (F.col("outcome") == "success")
        & (F.col("receiver") == "Company1")
        & (F.col("sender") == "CompanyB")
    ).alias("R")
    joined = s.join(r, F.col("S.serviceId") == F.col("R.serviceId")).select(
        (F.col("R.ts") - F.col("S.ts")).alias("delay"),
        levels.merge_pair(
            F.col(f"S.{levels.LEVEL_COLUMN}"), F.col(f"R.{levels.LEVEL_COLUMN}")
        ).alias("lvl"),
    )
    got = joined.collect()
    assert sorted(row.delay for row in got) == [-5, 1, 2, 8]
    assert {CLOUD.level(row.lvl) for row in got} == {("1", "B")}


def test_q7_trusted_groups(message_log):
    """Q7 at [T,T], successes by serviceId: 5 → (1, 9) at [1,B]; 7 → (8, 8) at [2,⊥]."""
    q7 = at(message_log, (T, T)).where(F.col("outcome") == "success")
    got = {
        row.serviceId: (row.lo, row.hi, CLOUD.level(row.lvl))
        for row in _window_min_max(q7, "serviceId").collect()
    }
    assert got == {"5": (1, 9, ("1", "B")), "7": (8, 8, ("2", B0))}


def _last_rows_count(frame, n: int, where):
    """``SELECT COUNT FROM frame [ROWS n] WHERE ...`` at the end of the stream (native Spark)."""
    newest = Window.orderBy(F.col("ts").desc())
    window = frame.withColumn("_rank", F.row_number().over(newest)).where(F.col("_rank") <= n)
    return window.where(where).count()


def test_qi_qj_filter_before_the_window_differs_from_after(message_log):
    """001 §3 with [ROWS 2]: Qi at [1,⊥] windows r7, r10 → 1 success to B. Qj at [T,⊥] windows
    r9, r10; Qj' keeps level = [1,⊥] after the window → 0. Post-filtering Qj does not give Qi."""
    to_b = send("success") & (F.col("receiver") == "CompanyB")
    qi = _last_rows_count(at(message_log, ("1", B0)), 2, to_b)
    own = levels.level_column() == CLOUD.clearance(("1", B0))
    qj_after = _last_rows_count(at(message_log, (T, B0)), 2, to_b & own)
    assert (qi, qj_after) == (1, 0)


def test_time_window_result_filtered_afterwards_is_withheld(message_log):
    """A time window at [T,⊥] counts r1, r7, r9 at LUB [T,⊥]: filtering that result for [1,⊥]
    delivers nothing, while the window at [1,⊥] counts r1, r7 → 2 at [1,⊥]."""
    to_b = send("success") & (F.col("receiver") == "CompanyB")

    def counted(frame):
        return (
            frame.where(to_b)
            .groupBy(F.window("timestamp", "1 minute"))
            .agg(F.count("*").alias("n"), levels.merge_group().alias("lvl"))
        )

    [high] = counted(at(message_log, (T, B0))).collect()
    assert (high.n, CLOUD.level(high.lvl)) == (3, (T, B0))
    after = counted(at(message_log, (T, B0))).where(
        levels.dominated(CLOUD.clearance(("1", B0)), F.col("lvl"))
    )
    assert after.count() == 0
    [low] = counted(at(message_log, ("1", B0))).collect()
    assert (low.n, CLOUD.level(low.lvl)) == (2, ("1", B0))


def test_output_filter_checks_the_clearance_of_the_moment(message_log):
    """The Q7 results (serviceId 5 at [1,B], 7 at [2,⊥]) as Spark hands them to delivery: a
    subscriber cleared [1,T] gets serviceId 5 only; once lowered to [1,⊥] it gets neither, and
    one cleared [T,T] gets both."""
    q7 = _window_min_max(at(message_log, (T, T)).where(F.col("outcome") == "success"), "serviceId")
    batch = q7.withColumnRenamed("lvl", levels.LEVEL_COLUMN).orderBy("serviceId").toArrow()
    services = batch.column("serviceId").to_pylist()
    assert services == ["5", "7"]

    def seen(level):
        return [services[i] for i in secfilter.cleared(batch, CLOUD.clearance(level))]

    assert seen(("1", T)) == ["5"]
    assert seen(("1", B0)) == []
    assert seen((T, T)) == ["5", "7"]
    assert seen(("2", B0)) == ["7"]
