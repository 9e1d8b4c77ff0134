package sluice.source;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.SupportsAdmissionControl;

/**
 * One query's reading of the log. Offsets are the server's JSON ({stream: {seq, seg, pos}})
 * kept as the server wrote it, so a checkpoint records exactly what the query consumed;
 * {@code latestOffset} long-polls the server, so an idle query costs a wake-up per
 * {@code poll} seconds. The rows of a batch are fetched on the driver as soon as its end
 * is known, before Spark logs the batch's offsets, so a log that cannot be read fails the
 * query before it records a batch it could never run (Spark's "simple" sources do the
 * same); a restart that replays a logged batch fetches its rows again from the same
 * offsets. Executors never need to reach the server. The hello names the source's directory in
 * its query's checkpoint, so the server knows which sources Spark asks in turn (one query's).
 */
final class LogStream implements MicroBatchStream, SupportsAdmissionControl {
  private final Map<String, String> options;
  private final double poll;
  private HeadConnection connection;
  private String initial;
  private Fetched fetched; // the rows of the batch latestOffset found, until Spark plans it

  LogStream(Map<String, String> options, String checkpoint) {
    this.options = new HashMap<>(options);
    this.options.put("checkpoint", checkpoint);
    this.poll = Double.parseDouble(options.getOrDefault("poll", "1.0"));
  }

  private HeadConnection connection() throws IOException {
    if (connection == null) {
      HeadConnection opened = HeadConnection.open(options.get("heads"));
      initial = opened.hello(options);
      connection = opened;
    }
    return connection;
  }

  private <T> T call(IoCall<T> call) {
    try {
      return call.run(connection());
    } catch (IOException e) {
      stop(); // the next call reconnects
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  @Override
  public Offset initialOffset() {
    return call(c -> new JsonOffset(initial));
  }

  /** Admission control only for the start: the long poll needs to know where it stands. */
  @Override
  public ReadLimit getDefaultReadLimit() {
    return ReadLimit.allAvailable();
  }

  @Override
  public Offset latestOffset(Offset start, ReadLimit limit) {
    return call(
        c -> {
          String end = c.latest(start.json(), poll);
          if (!end.equals(start.json())) {
            fetched = new Fetched(start.json(), end, c.read(start.json(), end));
          }
          return new JsonOffset(end);
        });
  }

  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException("Spark asks latestOffset(start, limit)");
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    Fetched batch = fetched;
    fetched = null;
    byte[] rows =
        batch != null && batch.start.equals(start.json()) && batch.end.equals(end.json())
            ? batch.rows
            : call(c -> c.read(start.json(), end.json()));
    return rows == null ? new InputPartition[0] : new InputPartition[] {new ArrowPartition(rows)};
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new ArrowPartition.Factory();
  }

  @Override
  public Offset deserializeOffset(String json) {
    return new JsonOffset(json);
  }

  @Override
  public void commit(Offset end) {}

  @Override
  public void stop() {
    if (connection != null) {
      connection.close();
      connection = null;
    }
  }

  /** A call to the server that may fail on the connection. */
  @FunctionalInterface
  private interface IoCall<T> {
    T run(HeadConnection connection) throws IOException;
  }

  /** Rows fetched for the batch from {@code start} to {@code end} (null: none). */
  private record Fetched(String start, String end, byte[] rows) {}

  /** An offset as the server wrote it. */
  static final class JsonOffset extends Offset {
    private final String json;

    JsonOffset(String json) {
      this.json = json;
    }

    @Override
    public String json() {
      return json;
    }
  }
}
