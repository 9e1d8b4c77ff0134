package sluice.source;

import java.util.UUID;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StateOperatorProgress;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryProgress;

/**
 * What the runtime's reconciler asks of every running query every few seconds, answered in
 * one call from Python: asking each query itself took several py4j calls and a progress
 * parsed from JSON per query per round, which at hundreds of idle diagrams was most of the
 * server's idle CPU (docs/benchmarks.md "Scale").
 */
public final class QueryWatch {
  private QueryWatch() {}

  /**
   * For each query id of {@code ids} (comma-separated), in order, comma-separated: -1 if no
   * query with that id is active in {@code spark}, else the rows its state stores held as of
   * its last progress (0 before its first).
   */
  public static String look(SparkSession spark, String ids) {
    StringBuilder answer = new StringBuilder();
    for (String id : ids.split(",")) {
      if (answer.length() > 0) {
        answer.append(',');
      }
      answer.append(stateRows(spark.streams().get(UUID.fromString(id))));
    }
    return answer.toString();
  }

  private static long stateRows(StreamingQuery query) {
    if (query == null || !query.isActive()) {
      return -1;
    }
    StreamingQueryProgress progress = query.lastProgress();
    long rows = 0;
    if (progress != null) {
      for (StateOperatorProgress operator : progress.stateOperators()) {
        rows += operator.numRowsTotal();
      }
    }
    return rows;
  }
}
