"""Primary-key upserts: a table of user profiles kept up to date with upserts, partial updates
and deletes, then read back with lookups.

    python examples/python/pk_upserts.py                  # the embedded engine
    python examples/python/pk_upserts.py 127.0.0.1:9123   # a Fluss cluster

A table with a primary key holds one row per key: an upsert replaces the row, a partial update
(``partial_update_by_name``) writes only some columns, a delete removes the key. Exits with 1 if
a lookup does not return what was written.
"""

from __future__ import annotations

import sys
import time

import fluss_writer as fw

USERS = 1_000


def main(address: str) -> int:
    table_path = f"examples.users_{int(time.time() * 1000)}"
    failed: list = []
    with fw.connect(address, {"client.id": "pk-upserts-example"}) as conn:
        admin = conn.admin()
        admin.create_database("examples", ignore_if_exists=True)
        schema = fw.Schema([("user_id", "BIGINT", False), ("name", "STRING"), ("visits", "BIGINT"),
                            ("country", "STRING")], primary_keys=["user_id"])
        admin.create_table(table_path, fw.TableDescriptor(schema, bucket_count=4))
        table = conn.get_table(table_path)

        def check(c: fw.WriteCompletion) -> None:  # on the callback worker: list.append is thread-safe
            if not c.ok:
                failed.append(c.message)

        with table.new_upsert().create_writer() as writer:
            for i in range(USERS):
                writer.upsert({"user_id": i, "name": f"user {i}", "visits": 0, "country": "nl"}, callback=check)
            for i in range(0, USERS, 2):  # a second version of every even user replaces the first
                writer.upsert({"user_id": i, "name": f"user {i} (renamed)", "visits": 0, "country": "be"}, callback=check)
            for i in range(0, USERS, 10):
                writer.delete({"user_id": i}, callback=check)

        # Only the key and "visits": name and country stay as they are.
        with table.new_upsert().partial_update_by_name(["user_id", "visits"]).create_writer() as visits:
            for i in range(USERS):
                visits.upsert({"user_id": i, "visits": i % 7}, callback=check)

        wrong = []
        for i in (1, 2, 3, 10, 11, USERS - 1):
            got = table.lookup([i])
            if i % 10 == 0:
                want = (i, None, i % 7, None)  # deleted, then a partial update made the key again
            elif i % 2 == 0:
                want = (i, f"user {i} (renamed)", i % 7, "be")
            else:
                want = (i, f"user {i}", i % 7, "nl")
            if got != want:
                wrong.append((i, got, want))
        print(f"lookup(1) = {table.lookup([1])}; lookup(2) = {table.lookup([2])}; lookup(10) = {table.lookup([10])}")
        admin.drop_table(table_path)
    print(f"{USERS} users upserted, {len(failed)} writes failed, {len(wrong)} lookups wrong")
    for w in wrong:
        print(f"  user {w[0]}: got {w[1]}, wanted {w[2]}")
    return 0 if not failed and not wrong else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "embedded"))
