"""Prometheus metrics: expose every writer's metrics on an HTTP endpoint for Prometheus to scrape.

    python examples/python/prometheus_metrics.py                        # embedded, port 8000
    python examples/python/prometheus_metrics.py 127.0.0.1:9123 9100    # a cluster, port 9100

Registers fluss_writer's collector with prometheus_client, serves ``/metrics``, writes 20,000 rows
(``client.id`` = ``prometheus-example`` labels them), then scrapes its own endpoint once, as
Prometheus would, and prints the fluss_writer lines about records. Needs ``pip install
prometheus_client`` (or the ``fluss-writer[prometheus]`` extra). Metric names and meanings:
docs/metrics.md.
"""

from __future__ import annotations

import sys
import urllib.request

import prometheus_client

import fluss_writer as fw


def main(address: str, port: int) -> int:
    fw.metrics.register()  # the global prometheus_client.REGISTRY
    prometheus_client.start_http_server(port, addr="127.0.0.1")
    with fw.connect(address, {"client.id": "prometheus-example"}) as conn:
        admin = conn.admin()
        admin.create_database("examples", ignore_if_exists=True)
        schema = fw.Schema([("id", "BIGINT", False), ("msg", "STRING")])
        admin.create_table("examples.metered", fw.TableDescriptor(schema, bucket_count=2), ignore_if_exists=True)
        with conn.get_table("examples.metered").new_append().create_writer() as writer:
            for i in range(20_000):
                writer.append_detached({"id": i, "msg": "metered"})
            writer.flush()
            # While the writer is open its metrics are live; this is what Prometheus scrapes.
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    lines = [line for line in text.splitlines() if line.startswith("fluss_writer_records_")]
    print("\n".join(lines))
    return 0 if any(line.startswith("fluss_writer_records_sent_total") and line.endswith(" 20000.0") for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "embedded", int(sys.argv[2]) if len(sys.argv) > 2 else 8000))
