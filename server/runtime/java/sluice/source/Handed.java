package sluice.source;

/**
 * The log position of the row a real-time task's reader handed on last: its stream and its
 * row number there ({@code _arrival}). {@code sluice.sink.RowSender} names each row it sends by
 * it, so the server's receiver can tell a row it has logged from a new one whatever epoch
 * brings it again (server/runtime/realtime.py).
 *
 * <p>It is kept per thread, as Spark's own {@code input_file_name()} is: a real-time query that
 * Sluice runs (inputs, filters, maps, unions: server/runtime/modes.py) passes each row from its
 * task's reader through the whole plan to the writer on the task's thread before the reader
 * reads the next, so the row the writer gets came from the row the reader handed on last. The
 * task's attempt id guards against a stale value from another task on the same thread.
 */
public record Handed(long task, String stream, long seq) {
  private static final ThreadLocal<Handed> LAST = new ThreadLocal<>();

  static void set(Handed handed) {
    LAST.set(handed);
  }

  /** The row the reader of task {@code task}, on this thread, handed on last. */
  public static Handed last(long task) {
    Handed handed = LAST.get();
    if (handed == null || handed.task != task) {
      throw new IllegalStateException(
          "a real-time row came with no row read by its task (" + task + ") before it");
    }
    return handed;
  }
}
