package sluice.source;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Sluice's streaming source, run inside Spark's JVM: a query reads the ingestion log (or a
 * result log) with no Python process of its own. The Sluice server does the reading and
 * hands over Arrow record batches (see {@link HeadConnection}); this side only keeps
 * offsets and turns the batches into Spark's columnar rows. Options are those of
 * server/runtime/source.py; {@code schema} is the rows' DDL.
 */
public final class LogSourceProvider implements TableProvider {
  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return StructType.fromDDL(options.get("schema"));
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new LogTable(schema);
  }

  /** The log as a table that can only be read as a stream. */
  static final class LogTable implements Table, SupportsRead {
    private final StructType schema;

    LogTable(StructType schema) {
      this.schema = schema;
    }

    @Override
    public String name() {
      return "sluice";
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.MICRO_BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      Map<String, String> settings = options.asCaseSensitiveMap();
      return () -> new LogScan(schema, settings);
    }
  }

  /**
   * A scan of the log: a micro-batch stream over it, or with option {@code realtime} the
   * stream Spark's real-time mode reads ({@link RealTimeLogStream}).
   */
  static final class LogScan implements Scan {
    private final StructType schema;
    private final Map<String, String> options;

    LogScan(StructType schema, Map<String, String> options) {
      this.schema = schema;
      this.options = options;
    }

    @Override
    public StructType readSchema() {
      return schema;
    }

    @Override
    public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
      return Boolean.parseBoolean(options.get("realtime"))
          ? new RealTimeLogStream(options, checkpointLocation)
          : new LogStream(options, checkpointLocation);
    }
  }
}
