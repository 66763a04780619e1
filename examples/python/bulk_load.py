"""Bulk load: write a Parquet or CSV file into a table, batch by batch, with a progress bar.

    python examples/python/bulk_load.py events.parquet fluss.events            # the embedded engine
    python examples/python/bulk_load.py events.csv fluss.events 127.0.0.1:9123  # a cluster

The table is created from the file's columns when it does not exist (4 buckets). The file is read
as a stream of Arrow record batches (never whole into memory) and each batch is written with one
callback; the bar shows the rows the server acknowledged, not the rows handed over. Exits with 1
if any row failed.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Iterator

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

import fluss_writer as fw


def batches(path: str) -> tuple[pa.Schema, int, Iterator[pa.RecordBatch]]:
    """The file's schema, its row count (-1 for CSV: unknown before reading) and its batches."""
    if path.endswith(".parquet"):
        f = pq.ParquetFile(path)
        return f.schema_arrow, f.metadata.num_rows, f.iter_batches(batch_size=8192)
    reader = pa_csv.open_csv(path)
    return reader.schema, -1, iter(reader)


class Progress:
    def __init__(self, total: int) -> None:
        self.total = total
        self.lock = threading.Lock()
        self.acked = 0
        self.failed = 0
        self.first_error = ""

    def on_done(self, c: fw.WriteCompletion) -> None:  # on the callback worker, once per batch
        rows = sum(b.rows for b in c.bucket_results)
        with self.lock:
            if c.ok:
                self.acked += rows
            else:
                self.failed += rows
                self.first_error = self.first_error or f"{c.error_code} {c.message}"

    def draw(self, final: bool = False) -> None:
        with self.lock:
            done, failed = self.acked, self.failed
        if self.total > 0:
            filled = int(30 * done / self.total)
            bar = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} rows"
        else:
            bar = f"{done} rows"
        sys.stderr.write(f"\r{bar}, {failed} failed" + ("\n" if final else ""))
        sys.stderr.flush()


def main(path: str, table: str, address: str) -> int:
    schema, total, stream = batches(path)
    progress = Progress(total)
    started = time.monotonic()
    with fw.connect(address) as conn:
        database = table.split(".", 1)[0]
        conn.admin().create_database(database, ignore_if_exists=True)
        conn.admin().create_table(table, fw.TableDescriptor(fw.Schema(schema), bucket_count=4), ignore_if_exists=True)
        with conn.get_table(table).new_append().create_writer() as writer:
            last_draw = 0.0
            for batch in stream:
                writer.write_arrow_batch(batch, callback=progress.on_done)
                if time.monotonic() - last_draw > 0.2:
                    progress.draw()
                    last_draw = time.monotonic()
            writer.flush()  # every callback has run: the counts are final
    if progress.total < 0:
        progress.total = progress.acked + progress.failed
    progress.draw(final=True)
    print(f"loaded {progress.acked} rows from {path} into {table} in {time.monotonic() - started:.2f} s")
    if progress.failed:
        print(f"{progress.failed} rows failed, the first with: {progress.first_error}")
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "embedded"))
