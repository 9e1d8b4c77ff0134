package sluice.source;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A batch's rows as the server sent them: an Arrow IPC stream whose columns are exactly the
 * source's schema (the server casts them), read as Spark columnar batches without copying.
 */
final class ArrowPartition implements InputPartition {
  private static final long serialVersionUID = 1L;
  private final byte[] ipc;

  ArrowPartition(byte[] ipc) {
    this.ipc = ipc;
  }

  /** Makes the columnar readers; Sluice's rows are never read row by row. */
  static final class Factory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
      return true;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      throw new UnsupportedOperationException("Sluice's source is read in columns");
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
      return new Reader(((ArrowPartition) partition).ipc);
    }
  }

  /** One record batch at a time; each batch is valid until the next {@code next()}. */
  static final class Reader implements PartitionReader<ColumnarBatch> {
    private final BufferAllocator allocator;
    private final ArrowStreamReader stream;
    private ColumnarBatch batch;

    Reader(byte[] ipc) {
      allocator = ArrowUtils.rootAllocator().newChildAllocator("sluice-source", 0, Long.MAX_VALUE);
      stream = new ArrowStreamReader(new ByteArrayInputStream(ipc), allocator);
    }

    @Override
    public boolean next() throws IOException {
      if (!stream.loadNextBatch()) {
        return false;
      }
      VectorSchemaRoot root = stream.getVectorSchemaRoot();
      List<FieldVector> vectors = root.getFieldVectors();
      ColumnVector[] columns = new ColumnVector[vectors.size()];
      for (int i = 0; i < columns.length; i++) {
        columns[i] = new ArrowColumnVector(vectors.get(i));
      }
      batch = new ColumnarBatch(columns, root.getRowCount());
      return true;
    }

    @Override
    public ColumnarBatch get() {
      return batch;
    }

    @Override
    public void close() throws IOException {
      stream.close();
      allocator.close();
    }
  }
}
