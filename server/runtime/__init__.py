"""The stream runtime: durable ingestion, diagrams as Spark streaming queries, result delivery.

The server's whole view of Spark::

    rt = Runtime(data_dir, spark_master="local[*]", spark_conf=None,
                 settings=RuntimeSettings(), session=None)   # or Runtime.start(server_settings)
    rt.create_stream(name, schema); rt.drop_stream(name)
    rt.append(name, tuples) -> AppendReceipt(stream, first_seq, count)   # durable on return
    rt.set_max_tuples(count)  # the batch limit, when an administrator changes it
    rt.deploy(diagram_id, plan, on_batch=None, version=None) -> version  # resumes its checkpoint
    rt.stop(diagram_id)      # queries stop; checkpoint and retention claim stay
    rt.remove(diagram_id)    # stop and forget (checkpoints, results, claim)
    rt.status(diagram_id) -> {"state": running|stopped|failed, "error", "failed_output",
                              "restarts", "outputs": {output: progress and delivery counters},
                              "boxes": {box: rows in and out, boxes/observed.py}}
    rt.given_up(diagram_id) -> bool      # failed, no automatic restart to come
    rt.plan(diagram_id) -> Plan | None   # as last deployed (rewritten, if it was)
    rt.wait_for_state(diagram_id, state, restarts=None, timeout=None)
        -> {state, error, restarts} | None
    rt.listener_bus() -> {"events_posted", "dropped_events": {queue: count}} | None
    rt.recent(output, n=None) -> pa.Table | None                         # last-N cache
    rt.compact(); rt.close()

``on_batch(output, table)`` (each output's tap, ``taps.Tap``) gets Arrow tables of the
output's user fields plus ``_label``, in order, from a pool of ``delivery_threads`` threads
shared by every tap; a slow one loses batches (counted in ``status``), never stalls the
query. Each result batch is logged durably before delivery, exactly once across crashes. A
diagram's state is checked against its queries every ``RuntimeSettings.reconcile_every``
seconds and at every ``status`` call (no listener events are relied on); a failed diagram is
restarted from its checkpoint up to ``RuntimeSettings.max_restarts`` times (with backoff),
then stays ``failed`` (``given_up``). On start the server calls ``deploy`` again for every
diagram the catalog records as running: the same plan gives the same version, hence the same
checkpoint.
"""

from server.ingest import AppendReceipt, Limits
from server.runtime.config import RuntimeSettings
from server.runtime.runner import Runtime

__all__ = ["AppendReceipt", "Limits", "Runtime", "RuntimeSettings"]
