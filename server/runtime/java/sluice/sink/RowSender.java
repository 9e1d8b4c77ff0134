package sluice.sink;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;

/**
 * A real-time query's sink (issue 41, bench/realtime_latency.py): a {@code foreach} writer,
 * the one kind of sink Spark's real-time mode allows besides Kafka, that hands each row (its
 * label columns included) to the server the moment it comes out of the plan, as a JSON line
 * {@code {"epoch", "partition", "row"}}; closing an epoch's partition sends {@code "end"}.
 * It runs in the JVM, so a query costs no Python worker.
 */
public final class RowSender extends ForeachWriter<Row> {
  private static final long serialVersionUID = 1L;
  private final String address;
  private transient SocketChannel channel;
  private transient OutputStream out;
  private transient String prefix;

  public RowSender(String address) {
    this.address = address;
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
    prefix = "{\"epoch\":" + epochId + ",\"partition\":" + partitionId;
    return true;
  }

  @Override
  public void process(Row row) {
    send(prefix + ",\"row\":" + row.json() + "}\n");
  }

  @Override
  public void close(Throwable error) {
    if (error == null) {
      send(prefix + ",\"end\":true}\n");
    }
    try {
      channel.close();
    } catch (IOException ignored) {
      // the epoch is over either way
    }
  }

  private void send(String line) {
    try {
      out.write(line.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
  }
}
