"""Writer metrics (issue 17): stats() and error_counts() for writes whose outcome the test knows,
the process snapshot, the Prometheus collector (scraped and parsed back), and slow callbacks."""

from __future__ import annotations

import logging
import time

import fluss_writer as fw
import pytest
from fluss_writer import testing
from helpers import eventually, make_table
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families


def test_stats_count_acknowledged_records_bytes_batches_and_requests() -> None:
    with fw.connect("embedded", {"client.id": "py-metrics", "client.writer.batch-timeout": "5ms"}) as conn:
        # Keyed by id, so the rows spread over both buckets: at least one batch each.
        table = make_table(conn, buckets=2, bucket_keys=["id"])
        w = conn.get_table(table).new_append().create_writer()
        for i in range(1_500):
            w.append({"id": i, "msg": f"m{i}"})
        w.flush()
        s = w.stats()
        assert s["records_sent"] == 1_500 and s["records_failed"] == 0
        assert s["batches_sent"] >= 2 and 1 <= s["requests_sent"] <= s["batches_sent"]
        assert s["request_latency_count"] == s["requests_sent"]
        assert 0 < s["request_latency_p50_nanos"] <= s["request_latency_max_nanos"]
        assert s["bytes_sent"] > 0 and 0 < s["batch_records_p50"] <= s["batch_records_p99"] <= 1_500
        assert s["oldest_pending_batch_age_nanos"] == 0 and s["slow_callbacks"] == 0
        assert list(s) == [m[0] for m in fw.metrics.METRICS], "one table of metrics, in stats() order"
        assert w.error_counts() == []

        mine = [m for m in fw.metrics.snapshot() if m["client_id"] == "py-metrics"]
        assert len(mine) == 1 and mine[0]["table"] == table and mine[0]["stats"]["records_sent"] == 1_500
        # Per bucket: what the table stores in each bucket is what the writer counted there.
        buckets = w.bucket_counts()
        assert [b["bucket"] for b in buckets] == [0, 1]
        for b in buckets:
            stored = len(conn.get_table(table).scan(b["bucket"], 0))
            assert b["records_sent"] == stored > 0 and b["partition"] is None, b
            assert b["batches_sent"] >= 1 and b["records_failed"] == b["retries"] == 0
        assert sum(b["bytes_sent"] for b in buckets) == s["bytes_sent"]
        assert mine[0]["buckets"] == buckets
        w.close()


def test_error_counts_name_the_codes_of_retries_and_failures() -> None:
    # A linger longer than the test: each group of records is one batch, sent by the flush (with
    # a short one a loaded machine may send two, and retry the second behind the first).
    with fw.connect("embedded", {"client.writer.batch-timeout": "10s", "client.writer.retry-backoff": "5ms"}) as conn:
        _error_counts(conn, testing.engine(conn))


def _error_counts(conn: fw.Connection, engine: testing.EmbeddedEngine) -> None:
    table = make_table(conn, buckets=1)
    engine.inject_error(table, 0, 12, "moved", times=2)  # NOT_LEADER_OR_FOLLOWER: retried
    w = conn.get_table(table).new_append().create_writer()
    for i in range(10):
        w.append({"id": i})
    w.flush()
    engine.inject_error(table, 0, 13, "too large", times=1)  # RECORD_TOO_LARGE: final
    for i in range(5):
        w.append({"id": 100 + i})
    w.flush()
    s = w.stats()
    assert (s["records_sent"], s["records_failed"], s["retries"]) == (10, 5, 2)
    [b] = w.bucket_counts()
    assert (b["bucket"], b["records_sent"], b["records_failed"], b["retries"]) == (0, 10, 5, 2)
    assert w.error_counts() == [
        {"code": 12, "name": "NOT_LEADER_OR_FOLLOWER", "records_failed": 0, "retries": 2, "rejected": 0},
        {"code": 13, "name": "RECORD_TOO_LARGE_EXCEPTION", "records_failed": 5, "retries": 0, "rejected": 0},
    ]
    # A refused call is counted by its code; nothing was accepted.
    with pytest.raises(fw.InvalidRowError):
        w.append({"id": "not a number"})
    assert w.stats()["operations_rejected"] == 1
    assert [c for c in w.error_counts() if c["rejected"]] == [
        {"code": -1001, "name": "INVALID_ROW", "records_failed": 0, "retries": 0, "rejected": 1}
    ]
    w.close()


def test_prometheus_scrape_of_a_writer_parses_back() -> None:
    registry = CollectorRegistry()
    fw.metrics.register(registry)
    # A linger longer than the test: the 300 records go in one batch, sent by the flush, whose one
    # retry is the injected error's (with 5 ms a loaded machine sent two batches, and the second
    # was retried behind the first).
    with fw.connect("embedded", {"client.id": "scraped", "client.writer.batch-timeout": "10s"}) as conn:
        table = make_table(conn, buckets=1)
        engine = testing.engine(conn)
        engine.inject_error(table, 0, 12, "moved", times=1)
        w = conn.get_table(table).new_append().create_writer()
        for i in range(300):
            w.append({"id": i})
        w.flush()
        text = generate_latest(registry).decode()
        samples = {}
        types = {}
        for family in text_string_to_metric_families(text):
            types[family.name] = family.type
            for sample in family.samples:
                if sample.labels.get("client_id") == "scraped":
                    samples[(sample.name, sample.labels.get("code"))] = (sample.value, sample.labels)
        assert samples[("fluss_writer_records_sent_total", None)][0] == 300
        value, labels = samples[("fluss_writer_retries_by_code_total", "NOT_LEADER_OR_FOLLOWER")]
        assert value == 1 and labels["table"] == table and labels["writer"].isdigit()
        assert types["fluss_writer_records_sent"] == "counter"
        assert types["fluss_writer_pending_callbacks"] == "gauge"
        assert samples[("fluss_writer_pending_callbacks", None)][0] == 0
        # Every stats field but the quantiles is scraped, and the text rendering without
        # prometheus_client agrees.
        for field, name, kind, _unit, _help in fw.metrics.METRICS:
            if kind == "quantile":
                assert types[f"fluss_writer_{name}"] == "histogram", field
                assert (f"fluss_writer_{name}", None) not in samples, field
            else:
                assert (f"fluss_writer_{name}", None) in samples, field
        assert not any("p50_nanoseconds" in n or "p99_nanoseconds" in n for n, _ in samples)
        assert 'fluss_writer_records_sent_total{client_id="scraped"' in fw.metrics.prometheus_text()
        # Per bucket, with the partition (empty: the table has none) and bucket labels.
        value, labels = samples[("fluss_writer_bucket_retries_total", None)]
        assert value == 1 and labels["bucket"] == "0" and labels["partition"] == ""
        assert samples[("fluss_writer_bucket_records_sent_total", None)][0] == 300
        assert types["fluss_writer_bucket_records_sent"] == "counter"
        w.close()
    # Closed writers leave the scrape.
    scraped = generate_latest(registry).decode()
    assert 'client_id="scraped"' not in scraped


def test_a_slow_callback_is_counted_and_logged_with_the_stall(caplog: pytest.LogCaptureFixture) -> None:
    # A 500 ms threshold and a 1.5 s callback (as in the Rust test): only a stall of over 0.5 s
    # inside a fast callback would count it, and only a stall of over 1 s of the coarse clock's
    # ticker, at the slow callback's end, would hide that one.
    with fw.connect("embedded", {"client.writer.slow-callback-threshold": "500ms", "client.writer.batch-timeout": "5ms"}) as conn:
        table = make_table(conn, buckets=1)
        w = conn.get_table(table).new_append().create_writer()
        with caplog.at_level(logging.WARNING, logger="fluss_writer"):
            w.append({"id": 1}, callback=lambda c: time.sleep(1.5))
            for i in range(2, 6):
                w.append({"id": i}, callback=lambda c: None)
            w.flush()

            def logged() -> list:
                fw._native._flush_logs()
                return [r.getMessage() for r in caplog.records if "slow callback" in r.getMessage()]

            eventually(lambda: len(logged()) > 0)
            lines = logged()
        assert w.stats()["slow_callbacks"] == 1
        assert len(lines) == 1, lines
        assert table in lines[0] and "offset 0" in lines[0] and "FIFO callback worker" in lines[0]
        w.close()


def test_latency_histograms_scrape_as_prometheus_histograms() -> None:
    registry = CollectorRegistry()
    fw.metrics.register(registry)
    config = {"client.id": "py-hist", "client.writer.batch-timeout": "5ms", "client.writer.slow-callback-threshold": "20ms"}
    with fw.connect("embedded", config) as conn:
        table = make_table(conn, buckets=1)
        w = conn.get_table(table).new_append().create_writer()
        # Let the coarse clock's ticker (perhaps in a 100 ms sleep for a coarser watch) take up
        # the 2 ms tick of the 20 ms threshold.
        time.sleep(0.15)
        n = 120
        for i in range(n):
            w.append({"id": i}, callback=(lambda c: time.sleep(0.06)) if i == 5 else (lambda c: None))
        w.flush()
        s = w.stats()
        assert s["callbacks_run"] == n
        [mine] = [m for m in fw.metrics.snapshot() if m["client_id"] == "py-hist"]
        assert list(mine["histograms"]) == [h[0] for h in fw.metrics.HISTOGRAMS]
        run = mine["histograms"]["callback_run_seconds"]
        assert len(run["bounds"]) == len(run["counts"]) == 20
        assert run["bounds"][0] == 0.00001 and run["bounds"][-1] == 60.0
        assert run["count"] == n, run
        # The slow-callback check reads the same coarse-clock difference: a callback counted
        # slow (at least 20 ms) is a sample of at least 20 ms. (Whether the 60 ms one is counted
        # depends on the ticker being scheduled, which a loaded machine does not promise.)
        assert run["sum"] >= 0.02 * s["slow_callbacks"], (run, s)
        assert run["count"] - run["counts"][9] >= s["slow_callbacks"], (run, s)

        families = {f.name: f for f in text_string_to_metric_families(generate_latest(registry).decode())}
        for name, _help in fw.metrics.HISTOGRAMS:
            family = families[f"fluss_writer_{name}"]
            assert family.type == "histogram"
            mine_only = [x for x in family.samples if x.labels["client_id"] == "py-hist"]
            buckets = [(float(x.labels["le"]), x.value) for x in mine_only if x.name.endswith("_bucket")]
            [count] = [x.value for x in mine_only if x.name.endswith("_count")]
            [total] = [x.value for x in mine_only if x.name.endswith("_sum")]
            assert [le for le, _ in buckets] == [*mine["histograms"][name]["bounds"], float("inf")], name
            # Spelled as the core spells them (series of every binding sum by `le`).
            les = [x.labels["le"] for x in mine_only if x.name.endswith("_bucket")]
            assert les == [*fw._native.LATENCY_BUCKET_LE, "+Inf"] and les[0] == "0.00001" and les[-2] == "60", les
            values = [v for _, v in buckets]
            assert values == sorted(values), f"{name}: cumulative"
            assert values[-1] == count == mine["histograms"][name]["count"], name
            assert total == pytest.approx(mine["histograms"][name]["sum"]), name
            assert all(x.labels["table"] == table and x.labels["writer"] == str(mine["writer"]) for x in mine_only)
        by_name = {
            x.name: x.value for x in families["fluss_writer_callback_run_seconds"].samples if x.labels["client_id"] == "py-hist"
        }
        assert by_name["fluss_writer_callback_run_seconds_count"] == n
        assert by_name["fluss_writer_callback_run_seconds_sum"] == pytest.approx(run["sum"])
        requests = [
            x.value
            for x in families["fluss_writer_request_latency_seconds"].samples
            if x.labels["client_id"] == "py-hist" and x.name.endswith("_count")
        ]
        assert requests == [s["requests_sent"]]
        # The exposition without prometheus_client carries the same histogram.
        text = fw.metrics.prometheus_text()
        assert "# TYPE fluss_writer_callback_run_seconds histogram" in text
        assert (
            f'fluss_writer_callback_run_seconds_count{{client_id="py-hist",table="{table}",writer="{mine["writer"]}"}} {n}'
            in text
        )
        w.close()
