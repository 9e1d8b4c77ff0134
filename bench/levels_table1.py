"""Seed 000's Table 1 on Sluice: a level-secured query vs the same query with a hand-written
predicate on the level field (the paper's "vanilla" variant) vs no level security at all.

The input is the paper's Exp 3/4 mix: five levels [1,⊥], [2,⊥], [⊥,A], [⊥,B], [⊥,C], 20% each.
Q3 runs at [⊥,B] (20% visible), Q4 at [⊥,T] (60% visible). Secured = ``levels.at_level`` (the
subset test on the label) before the query's own predicate; hand-written = the query's
predicate AND ``_level IN (...)`` listing the visible level values. Both run in one process,
interleaved (``bench.harness.compare``); the goal is secured within 2% of hand-written.
"""

from __future__ import annotations

from bench import spark_batch
from bench.harness import Mode, compare, timed
from bench.report import Goal, Result, Row, percent
from boxes import levels

NAME = "levels (000 Table 1)"
LATTICE = levels.Lattice.of({"COI1": ["1", "2"], "COI2": ["A", "B", "C"]})
COMPANIES = ["1", "2", "A", "B", "C"]
GOAL = 1.02
QUERIES = {
    "Q3 at [⊥,B]": (("⊥", "B"), ["CompanyB"]),
    "Q4 at [⊥,T]": (("⊥", "T"), ["CompanyA", "CompanyB", "CompanyC"]),
}


def message_log(spark, count: int):
    """``count`` MessageLog rows made in the JVM; the level is the sender's company bit."""
    from pyspark.sql import functions as F

    base = spark.range(count)
    company = (base.id % len(COMPANIES)).cast("int")
    masks = F.array(*[F.lit(LATTICE.company_mask(c)).cast("long") for c in COMPANIES])
    receivers = F.array(*[F.lit(f"Company{c}") for c in COMPANIES])
    return base.select(
        base.id.alias("ts"),
        F.when(base.id % 3 == 0, "send").otherwise("receive").alias("msgType"),
        F.when(base.id % 7 == 0, "success").otherwise("failure").alias("outcome"),
        receivers[((base.id / 5).cast("long") % len(COMPANIES)).cast("int")].alias("receiver"),
        masks[company].alias(levels.LEVEL_COLUMN),
    ).cache()


def run(mode: Mode) -> Result:
    from pyspark.sql import functions as F

    spark = spark_batch.session()
    count, reps = mode.tuples(1_000_000, 5_000_000, least=10_000), mode.pick(7, 9, least=1)
    frame = message_log(spark, count)
    frame.count()  # materialise the cache outside the timings
    result = Result()
    for case, (level, receivers) in QUERIES.items():
        clearance = LATTICE.clearance(level)
        where = (
            (F.col("msgType") == "send")
            & (F.col("outcome") == "failure")
            & F.col("receiver").isin(*receivers)
        )
        visible = [
            LATTICE.company_mask(c) for c in COMPANIES if LATTICE.company_mask(c) & clearance
        ]
        hand = frame.where(where & levels.level_column().isin(*visible))
        secured = levels.at_level(frame, clearance).where(where)
        open_ = frame.where(where)

        def collect(df):
            return lambda: df.agg(F.count("*"), F.max("ts")).collect()

        c = compare(timed(collect(secured)), timed(collect(hand)), reps, mode.warmup(2))
        o = compare(timed(collect(secured)), timed(collect(open_)), reps, mode.warmup(1))
        result.rows += [
            Row(
                NAME,
                f"{case} vs hand-written",
                "tuples/s",
                count / c.secured_median,
                count / c.unsecured_median,
                c,
            ),
            Row(
                NAME,
                f"{case} vs no security",
                "tuples/s",
                count / o.secured_median,
                count / o.unsecured_median,
                o,
            ),
        ]
        result.goals.append(
            Goal(
                NAME,
                f"{case}: within {percent(GOAL)} of hand-written",
                result.rows[-2].overhead(),
                c.ratio <= GOAL,
            )
        )
    frame.unpersist()
    return result
