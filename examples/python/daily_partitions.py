"""A daily partitioned table: rows go to the partition of their day, created on write; old days
are dropped (a retention of a few days).

    python examples/python/daily_partitions.py                  # the embedded engine
    python examples/python/daily_partitions.py 127.0.0.1:9123   # a cluster

Writes 1,000 rows spread over the last 7 days into ``examples.daily_events`` (partitioned by
``dt``, 2 buckets per partition); each callback sees the partition its row went to. Then drops
the partitions older than RETENTION_DAYS and lists what is left. Exits with 1 if any row failed.
"""

from __future__ import annotations

import collections
import datetime
import sys
import threading

import fluss_writer as fw

RETENTION_DAYS = 3
TABLE = "examples.daily_events"


def main(address: str) -> int:
    today = datetime.date.today()
    lock = threading.Lock()
    per_partition: collections.Counter[str] = collections.Counter()
    failed: list[str] = []

    def on_done(c: fw.WriteCompletion) -> None:
        with lock:
            if c.ok:
                per_partition[c.partition or ""] += 1
            else:
                failed.append(f"{c.error_code} {c.message}")

    with fw.connect(address) as conn:
        admin = conn.admin()
        admin.create_database("examples", ignore_if_exists=True)
        schema = fw.Schema([("id", "BIGINT", False), ("dt", "STRING", False), ("msg", "STRING")])
        admin.create_table(TABLE, fw.TableDescriptor(schema, bucket_count=2, partition_keys=["dt"]), ignore_if_exists=True)
        with conn.get_table(TABLE).new_append().create_writer() as writer:
            for i in range(1000):
                day = today - datetime.timedelta(days=i % 7)
                writer.append({"id": i, "dt": day.isoformat(), "msg": f"event {i}"}, callback=on_done)
            writer.flush()

        oldest_kept = (today - datetime.timedelta(days=RETENTION_DAYS - 1)).isoformat()
        for p in admin.list_partitions(TABLE):
            if p.spec["dt"] < oldest_kept:
                admin.drop_partition(TABLE, p.spec, ignore_if_not_exists=True)
        left = sorted(p.partition_name for p in admin.list_partitions(TABLE))

    with lock:
        print(f"rows per partition: {dict(sorted(per_partition.items()))}")
        print(f"partitions kept ({RETENTION_DAYS} days): {left}")
        for f in failed[:5]:
            print(f"failed: {f}")
        return 0 if not failed and sum(per_partition.values()) == 1000 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "embedded"))
