package sluice.source;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The source's connection to the Sluice server's head service (server/runtime/heads.py): one
 * JSON line each way, and after a "read" reply the Arrow IPC stream it announces. The server
 * keeps the source's options for the connection's life, so a reconnect says hello again.
 * A channel, not a plain socket: stopping a query interrupts its thread, which must end a
 * long poll at once rather than when it expires.
 */
final class HeadConnection implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final SocketChannel channel;
  private final DataInputStream in;
  private final OutputStream out;

  private HeadConnection(SocketChannel channel) {
    this.channel = channel;
    this.in = new DataInputStream(new BufferedInputStream(Channels.newInputStream(channel)));
    this.out = Channels.newOutputStream(channel);
  }

  static HeadConnection open(String address) throws IOException {
    int colon = address.lastIndexOf(':');
    String host = address.substring(0, colon);
    int port = Integer.parseInt(address.substring(colon + 1));
    SocketChannel channel;
    try {
      channel = SocketChannel.open(new InetSocketAddress(host, port));
    } catch (IOException e) {
      throw new IOException("Sluice's head service at " + address + ": " + e.getMessage(), e);
    }
    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    return new HeadConnection(channel);
  }

  /** Introduce the source (its options); the answer is its initial offset. */
  String hello(Map<String, String> options) throws IOException {
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("op", "open");
    request.put("options", options);
    return ask(request).get("offset").asText();
  }

  /** The log's end past {@code known}, as soon as it grows or after {@code wait} seconds. */
  String latest(String known, double wait) throws IOException {
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("op", "latest");
    request.put("offset", known);
    request.put("wait", wait);
    return ask(request).get("offset").asText();
  }

  /** The rows between two offsets as an Arrow IPC stream, or null if there are none. */
  byte[] read(String start, String end) throws IOException {
    return read(start, end, 0).rows();
  }

  /**
   * The rows from {@code start} toward {@code end}: all of them ({@code limit} 0), or the
   * frames of each stream that hold at most {@code limit} rows (at least one frame), and the
   * offset where they end, a frame boundary.
   */
  Read read(String start, String end, long limit) throws IOException {
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("op", "read");
    request.put("start", start);
    request.put("end", end);
    if (limit > 0) {
      request.put("limit", limit);
    }
    JsonNode reply = ask(request);
    byte[] rows = new byte[reply.get("bytes").asInt()];
    in.readFully(rows);
    return new Read(reply.get("rows").asLong() == 0 ? null : rows, reply.get("end").asText());
  }

  /** Rows read (an Arrow IPC stream, or null if there are none) and the offset after them. */
  record Read(byte[] rows, String end) {}

  private JsonNode ask(Map<String, Object> request) throws IOException {
    byte[] line = JSON.writeValueAsBytes(request);
    byte[] message = Arrays.copyOf(line, line.length + 1);
    message[line.length] = '\n';
    out.write(message);
    JsonNode reply = JSON.readTree(readLine());
    if (reply.has("error")) {
      throw new IOException(reply.get("error").asText()); // e.g. "[LOG_GAP] ..."
    }
    return reply;
  }

  private String readLine() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) != '\n') {
      if (b < 0) {
        throw new IOException("Sluice's head service closed the connection");
      }
      bytes.write(b);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing a broken connection: nothing more to do
    }
  }
}
