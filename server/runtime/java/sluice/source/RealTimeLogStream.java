package sluice.source;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.SupportsAdmissionControl;
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode;
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The log read in Spark's real-time mode (option {@code realtime}; issue 41, measured by
 * bench/realtime_latency.py): a batch's one task long-polls the head service itself and hands
 * each row on as soon as it is read, until the batch's duration is up. The end of a batch is
 * known only then, so an offset is a server offset plus, per stream, the rows of the range after
 * it that were handed on ({@code {"at": ..., "skip": {"in1": 3, "in2": 0}}}): a task may stop in
 * the middle of a chunk the server sent at once, and the next batch resumes at exactly the next
 * row of each stream. The count is per stream because a source may read several streams (a
 * union read as one scan, server/runtime/modes.py): a range read again from {@code at} later
 * holds each stream's rows read before and maybe more of them (a stream's rows come in log
 * order, a chunk ends where each stream's frames do), so one count over all streams would name
 * other rows. A range is read
 * in chunks ({@link #CHUNK_ROWS}), each ending where the server says (a frame boundary), so a
 * batch's end is never further than one chunk behind the rows it handed on. The task
 * reaches the server from wherever it runs (an executor, unlike the micro-batch source).
 *
 * <p>These offsets are exact, but a batch that a crash cut short is run again from its start
 * for a whole batch duration of its own, so it may end before or after where the lost run got:
 * its rows come again under other epochs than before. So each row handed on is named by its log
 * position ({@link Handed}), which the server's receiver skips by.
 */
final class RealTimeLogStream
    implements MicroBatchStream, SupportsAdmissionControl, SupportsRealTimeMode {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The most rows of a stream one read asks for (at least one frame comes: a frame is never
   * split). A task hands on no row of a range until it is read, and Spark's batch (at least 5 s)
   * ends after the next row once its time is up: a range far behind read whole took longer
   * than the batch (13,000-42,000 rows), so each epoch handed on one row and the next read the
   * range again. The server's cost is per frame: measured on 2 shared cores at load average
   * 10, one-row frames, 20,000 read whole took 9.2 s and a chunk of 1,000 0.4-0.5 s, a tenth
   * of the shortest batch. An epoch that ends meanwhile ends at an exact offset in a chunk, and
   * the next goes on from there.
   */
  static final long CHUNK_ROWS = 1000;

  private final Map<String, String> options;
  private HeadConnection connection;
  private String initial;

  RealTimeLogStream(Map<String, String> options, String checkpoint) {
    this.options = new HashMap<>(options);
    this.options.put("checkpoint", checkpoint);
  }

  private HeadConnection connection() throws IOException {
    if (connection == null) {
      HeadConnection opened = HeadConnection.open(options.get("heads"));
      initial = opened.hello(options);
      connection = opened;
    }
    return connection;
  }

  @Override
  public Offset initialOffset() {
    try {
      connection();
      return new At(initial, none());
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  @Override
  public ReadLimit getDefaultReadLimit() {
    return ReadLimit.allAvailable();
  }

  /**
   * What the log holds now, without waiting: Spark asks before each batch (for its progress);
   * the batch's real end is where its task stopped ({@link #mergeOffsets}).
   */
  @Override
  public Offset latestOffset(Offset start, ReadLimit limit) {
    At from = (At) start;
    try {
      String end = connection().latest(from.at, 0);
      return end.equals(from.at) ? from : new At(end, none());
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException("Spark asks latestOffset(start, limit)");
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start) {
    return new InputPartition[] {new Range(options, (At) start, null)};
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    return new InputPartition[] {new Range(options, (At) start, (At) end)};
  }

  @Override
  public Offset mergeOffsets(PartitionOffset[] offsets) {
    return (At) offsets[0]; // one partition: the stream's one task
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new Factory();
  }

  /**
   * An offset as the checkpoint logged it. One written before unions were read as one source
   * says {@code "skip": n}: its source read one stream, and n is that stream's count.
   */
  @Override
  public Offset deserializeOffset(String json) {
    try {
      JsonNode node = JSON.readTree(json);
      JsonNode skip = node.get("skip");
      Map<String, Long> counts = none();
      if (skip.isObject()) {
        skip.fields().forEachRemaining(e -> counts.put(e.getKey(), e.getValue().asLong()));
      } else if (skip.asLong() != 0) {
        String[] read = streams(options);
        if (read.length != 1) {
          throw new IllegalStateException("a count of rows read past an offset names no stream");
        }
        counts.put(read[0], skip.asLong());
      }
      return new At(node.get("at").asText(), counts);
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }

  /** No rows of any stream: the count at the start of a range. */
  private Map<String, Long> none() {
    Map<String, Long> counts = new TreeMap<>();
    for (String stream : streams(options)) {
      counts.put(stream, 0L);
    }
    return counts;
  }

  /** The source's streams, by the rows' {@code _stream} (option {@code streams}). */
  static String[] streams(Map<String, String> options) {
    try {
      return JSON.readValue(options.get("streams"), String[].class);
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
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

  /** A server offset and, per stream, how many rows of it after that offset were handed on. */
  static final class At extends Offset implements PartitionOffset {
    private static final long serialVersionUID = 2L;
    final String at;
    final TreeMap<String, Long> skip;

    At(String at, Map<String, Long> skip) {
      this.at = at;
      this.skip = new TreeMap<>(skip);
    }

    long skip(String stream) {
      return skip.getOrDefault(stream, 0L);
    }

    @Override
    public String json() {
      ObjectNode node = JSON.createObjectNode();
      node.put("at", at);
      ObjectNode counts = node.putObject("skip");
      skip.forEach(counts::put);
      return node.toString();
    }
  }

  /** The batch's one task: from {@code start}, to {@code end} if a replay knows it. */
  record Range(Map<String, String> options, At start, At end) implements InputPartition {}

  /** Row readers: real-time mode reads rows, not columns. */
  static final class Factory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      return new Reader((Range) partition);
    }
  }

  /**
   * Long-polls the server and hands on each row it reads, keeping the offset after it. A range
   * read again (a batch resumed in its middle, or replayed) gives each stream's rows handed on
   * before first, in log order: those are dropped, per stream. A replay ends where its end
   * says, per stream: the rows of a stream past its count belong to a later batch.
   */
  static final class Reader implements SupportsRealTimeRead<InternalRow> {
    private final Map<String, String> options;
    private final At end;
    private final double poll;
    private final long task = TaskContext.get().taskAttemptId();
    private final String[] streams; // by the rows' _stream
    private final int streamColumn;
    private final int arrivalColumn; // a row's number in its stream's log
    private HeadConnection connection;
    private String at; // the server offset the current range starts at
    private final Map<String, Long> consumed; // per stream, rows of that range handed on
    private final Map<String, Long> seen = new HashMap<>(); // per stream, rows of `rows` passed
    private String rangeEnd; // the server offset after the current range (null: none read)
    private List<InternalRow> rows = List.of();
    private int next; // the next of `rows` to pass
    private InternalRow current;

    Reader(Range range) {
      this.options = new HashMap<>(range.options());
      this.options.remove("checkpoint"); // a task's connection is not one of the query's polls
      this.end = range.end();
      this.poll = Double.parseDouble(options.getOrDefault("poll", "1.0"));
      this.at = range.start().at;
      this.consumed = new TreeMap<>(range.start().skip);
      StructType schema = StructType.fromDDL(options.get("schema"));
      this.streamColumn = schema.fieldIndex("_stream");
      this.arrivalColumn = schema.fieldIndex("_arrival");
      this.streams = streams(options);
    }

    @Override
    public PartitionOffset getOffset() {
      return new At(at, consumed);
    }

    /** Whether a replay has handed on every row of its last range that its end counts. */
    private boolean reachedEnd() {
      if (end == null || !at.equals(end.at)) {
        return false;
      }
      for (String stream : streams) {
        if (consumed.getOrDefault(stream, 0L) < end.skip(stream)) {
          return false;
        }
      }
      return true;
    }

    /**
     * Whether the next row of {@code rows}, of {@code stream}, is to be handed on: not one
     * handed on before ({@code consumed} counts it) nor, in a replay's last range, one past
     * its end. A quiet stream's mark ({@code _arrival} -1, no row of the log) is counted by
     * neither: the input drops it (boxes/input.py), and a read again may have another.
     */
    private boolean fresh(String stream, long arrival) {
      if (arrival < 0) {
        return true;
      }
      long passed = seen.merge(stream, 1L, Long::sum);
      long handed = consumed.getOrDefault(stream, 0L);
      if (passed <= handed) {
        return false;
      }
      if (end != null && at.equals(end.at) && handed >= end.skip(stream)) {
        return false;
      }
      consumed.put(stream, handed + 1);
      return true;
    }

    @Override
    public boolean next() throws IOException {
      return nextWithTimeout(0L).hasRecord();
    }

    @Override
    public RecordStatus nextWithTimeout(Long timeoutMs) throws IOException {
      return nextWithTimeout(System.currentTimeMillis(), timeoutMs);
    }

    @Override
    public RecordStatus nextWithTimeout(Long startTimeMs, Long timeoutMs) throws IOException {
      long deadline = startTimeMs + timeoutMs;
      while (true) {
        if (reachedEnd()) {
          return RecordStatus.newStatusWithoutArrivalTime(false);
        }
        if (rangeEnd != null && next < rows.size()) {
          InternalRow row = rows.get(next++);
          String stream = streams[row.getInt(streamColumn)];
          long arrival = row.getLong(arrivalColumn);
          if (fresh(stream, arrival)) {
            current = row;
            Handed.set(new Handed(task, stream, arrival));
            return RecordStatus.newStatusWithoutArrivalTime(true);
          }
          continue;
        }
        if (rangeEnd != null) { // the range is used up: the next starts where it ended
          at = rangeEnd;
          consumed.replaceAll((stream, count) -> 0L);
          rangeEnd = null;
        }
        long left = deadline - System.currentTimeMillis();
        if (end == null && left <= 0) {
          return RecordStatus.newStatusWithoutArrivalTime(false);
        }
        fetch(end == null ? Math.min(left / 1000.0, poll) : poll);
      }
    }

    /**
     * The next range: up to a replay's end, else whatever the log has past {@code at}, read in
     * chunks ({@link #CHUNK_ROWS}) that end where the server says.
     */
    private void fetch(double wait) throws IOException {
      if (connection == null) {
        connection = HeadConnection.open(options.get("heads"));
        connection.hello(options);
      }
      String until =
          end != null && !at.equals(end.at) ? end.at : connection.latest(at, Math.max(wait, 0));
      if (!until.equals(at)) {
        HeadConnection.Read read = connection.read(at, until, CHUNK_ROWS);
        rows = decode(read.rows());
        next = 0;
        seen.clear();
        rangeEnd = read.end();
      }
    }

    private static List<InternalRow> decode(byte[] ipc) throws IOException {
      List<InternalRow> decoded = new ArrayList<>();
      if (ipc == null) {
        return decoded;
      }
      try (BufferAllocator allocator =
              ArrowUtils.rootAllocator().newChildAllocator("sluice-realtime", 0, Long.MAX_VALUE);
          ArrowStreamReader stream = new ArrowStreamReader(new ByteArrayInputStream(ipc), allocator)) {
        while (stream.loadNextBatch()) {
          VectorSchemaRoot root = stream.getVectorSchemaRoot();
          List<FieldVector> vectors = root.getFieldVectors();
          ColumnVector[] columns = new ColumnVector[vectors.size()];
          for (int i = 0; i < columns.length; i++) {
            columns[i] = new ArrowColumnVector(vectors.get(i));
          }
          ColumnarBatch batch = new ColumnarBatch(columns, root.getRowCount());
          for (int i = 0; i < batch.numRows(); i++) {
            decoded.add(batch.getRow(i).copy()); // the vectors are freed with the allocator
          }
        }
      }
      return decoded;
    }

    @Override
    public InternalRow get() {
      return current;
    }

    @Override
    public void close() {
      if (connection != null) {
        connection.close();
      }
    }
  }
}
