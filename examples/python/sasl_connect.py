"""Connect to a Fluss cluster whose listener requires SASL/PLAIN, write a few rows, and see what a
wrong password gives.

    FLUSS_SASL_USERNAME=admin FLUSS_SASL_PASSWORD=... python examples/python/sasl_connect.py 127.0.0.1:9223

The user and password come from the environment, never from the command line (where other users
of the machine could read them) or the code; fluss-writer never prints them, in errors or logs.
Fluss 0.9 has no TLS: SASL/PLAIN sends the password in clear text (SECURITY.md). The user needs
CREATE on the cluster for the database and table below (the test cluster's ``admin`` is a super
user). Exits with 1 if a row failed or the wrong password was not refused as expected.
"""

from __future__ import annotations

import os
import sys
import time

import fluss_writer as fw


def sasl_config(username: str, password: str) -> dict:
    return {
        "client.security.protocol": "SASL",
        "client.security.sasl.mechanism": "PLAIN",
        "client.security.sasl.username": username,
        "client.security.sasl.password": password,
        "client.request-timeout": "20s",
    }


def main(address: str) -> int:
    username = os.environ.get("FLUSS_SASL_USERNAME", "")
    password = os.environ.get("FLUSS_SASL_PASSWORD", "")
    if not username or not password:
        print("set FLUSS_SASL_USERNAME and FLUSS_SASL_PASSWORD", file=sys.stderr)
        return 2
    table = f"examples.sasl_{int(time.time() * 1000)}"
    acked: list = []
    with fw.connect(address, {**sasl_config(username, password), "client.id": "sasl-example"}) as conn:
        admin = conn.admin()
        admin.create_database("examples", ignore_if_exists=True)
        schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
        admin.create_table(table, fw.TableDescriptor(schema, bucket_count=2))
        with conn.get_table(table).new_append().create_writer() as writer:
            for i in range(100):
                writer.append({"id": i, "msg": "authenticated"}, callback=lambda c: acked.append(c.ok))
            writer.flush()
        admin.drop_table(table)
    print(f"as {username!r}: {sum(acked)} of 100 rows acknowledged")

    wrong = "not-" + password
    try:
        fw.connect(address, sasl_config(username, wrong)).close()
        print("a wrong password was accepted", file=sys.stderr)
        return 1
    except fw.ServerError as e:
        print(f"a wrong password: {e.code_name} ({e.code}); the message does not show it: {wrong not in str(e)}")
        refused = e.code_name == "AUTHENTICATE_EXCEPTION" and wrong not in str(e)
    return 0 if acked == [True] * 100 and refused else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
