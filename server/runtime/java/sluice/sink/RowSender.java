package sluice.sink;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;
import sluice.source.Handed;

/**
 * A real-time query's sink (issue 41, server/runtime/realtime.py): a {@code foreach} writer,
 * the one kind of sink Spark's real-time mode allows besides Kafka, that hands each row to the
 * server's receiver the moment it comes out of the plan. A connection is one epoch's
 * partition: a header line {@code {"output", "epoch", "partition"}}, then a line per row: the
 * stream and the row number there of the input row it came from ({@link Handed}), then the
 * one JSON text column the query made of it (its label included), tab-separated. Closing the
 * epoch sends an empty line and waits for the receiver's {@code ok}: the receiver has logged
 * every row durably, so Spark commits the epoch only after its rows are in the result log. It
 * runs in the JVM, so a query costs no Python worker.
 */
public final class RowSender extends ForeachWriter<Row> {
  private static final long serialVersionUID = 1L;
  private final String address;
  private final String output;
  private transient SocketChannel channel;
  private transient OutputStream out;
  private transient long task;

  public RowSender(String address, String output) {
    this.address = address;
    this.output = output;
  }

  @Override
  public boolean open(long partitionId, long epochId) {
    int colon = address.lastIndexOf(':');
    try {
      channel =
          SocketChannel.open(
              new InetSocketAddress(
                  address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))));
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    } catch (IOException e) {
      throw new UncheckedIOException("Sluice's row receiver at " + address + ": " + e, e);
    }
    out = Channels.newOutputStream(channel);
    task = TaskContext.get().taskAttemptId();
    send(
        "{\"output\":\"" + output + "\",\"epoch\":" + epochId + ",\"partition\":" + partitionId
            + "}\n");
    return true;
  }

  @Override
  public void process(Row row) {
    Handed from = Handed.last(task);
    send(from.stream() + "\t" + from.seq() + "\t" + row.getString(0) + "\n");
  }

  @Override
  public void close(Throwable error) {
    try {
      if (error == null) {
        send("\n");
        String reply = readLine(Channels.newInputStream(channel));
        if (!"ok".equals(reply)) {
          throw new IllegalStateException("Sluice's row receiver: " + reply);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Sluice's row receiver did not confirm the epoch: " + e, e);
    } finally {
      try {
        channel.close();
      } catch (IOException ignored) {
        // the epoch is over either way
      }
    }
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) {
        return "the connection closed before it confirmed the epoch";
      }
      line.write(b);
    }
    return line.toString(StandardCharsets.UTF_8);
  }

  private void send(String line) {
    try {
      out.write(line.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }
}
