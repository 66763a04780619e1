"""Configuration and timeouts follow the core's rules; no input panics (issue 11, defects 1
and 6).

* ``connect(bootstrap=None, config=None)``: the ``bootstrap`` argument and the
  ``bootstrap.servers`` key are one setting; both given and different is InvalidConfigError;
  neither means ``"embedded"``.
* Timeouts (``flush``, ``close``, ``wait``, ``Connection.close``): +inf and anything too long
  for a deadline is no bound; NaN and negative values are a ValueError.
* Configuration durations beyond 365 days are InvalidConfigError, not a panic now or later.
"""

from __future__ import annotations

import math
import pathlib

import fluss_writer as fw
import pytest
from fluss_writer import testing
from helpers import Recorder, make_table

# ----- defect 1: one address setting -----


def _works(c: fw.Connection) -> None:
    name = make_table(c)
    w = c.get_table(name).new_append().create_writer()
    assert w.append({"id": 1, "msg": "x"}).wait(10).ok
    assert [r[2] for r in testing.engine(c).scan(name, 0)] == [(1, "x")]
    c.close(10)


def test_connect_without_an_address_is_embedded() -> None:
    c = fw.connect()
    assert "embedded" in repr(c)
    _works(c)
    _works(fw.connect(None, None))
    _works(fw.connect(config={"client.writer.batch-timeout": "5ms"}))


@pytest.mark.parametrize("make", [dict, fw.Config], ids=["dict", "Config"])
def test_the_key_alone_gives_the_address(tmp_path: pathlib.Path, make) -> None:
    d = tmp_path / "db"
    c = fw.connect(config=make({"bootstrap.servers": f"embedded:{d}"}))
    assert (d / "LOCK").exists(), "the durable engine at the key's directory is open"
    _works(c)
    # The same address in both places (spaces aside) is fine.
    _works(fw.connect(f" embedded:{d} ", make({"bootstrap.servers": f"embedded:{d}"})))


@pytest.mark.parametrize("make", [dict, fw.Config], ids=["dict", "Config"])
def test_two_different_addresses_are_invalid_config(tmp_path: pathlib.Path, make) -> None:
    with pytest.raises(fw.InvalidConfigError, match="localhost:9123") as info:
        fw.connect("embedded", make({"bootstrap.servers": "localhost:9123"}))
    assert "embedded" in str(info.value)
    with pytest.raises(fw.InvalidConfigError):
        fw.connect(f"embedded:{tmp_path}", make({"bootstrap.servers": "embedded"}))
    assert not (tmp_path / "LOCK").exists()


def test_a_bootstrap_that_is_no_str_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="bootstrap"):
        fw.connect(9123)  # type: ignore[arg-type]


# ----- defect 6: timeouts -----

HUGE = [1e300, 1e19, float("inf"), 2.0**64, 1e9]
BAD = [-1.0, -1e-9, float("nan"), float("-inf")]


def test_huge_timeouts_are_no_bound(conn, log_table) -> None:
    rec = Recorder()
    w = conn.get_table(log_table).new_append().create_writer()
    for t in HUGE:
        w.append({"id": 1, "msg": "x"}, callback=rec)
        w.flush(t)
        assert w.append({"id": 2, "msg": "y"}).wait(t).ok
    w.close(1e300)
    assert len(rec.items) == len(HUGE) and all(c.ok for c in rec.items)
    c2 = fw.connect()
    c2.close(1e19)
    c3 = fw.connect()
    c3.close(float("inf"))


def test_nan_and_negative_timeouts_are_value_errors_and_change_nothing(conn, log_table) -> None:
    w = conn.get_table(log_table).new_append().create_writer()
    r = w.append({"id": 1, "msg": "x"})
    for t in BAD:
        for call in (w.flush, w.close, r.wait, conn.close):
            with pytest.raises(ValueError, match="NaN|negative") as info:
                call(t)
            assert not isinstance(info.value, fw.FlussWriterError)
    assert not w.closed and not conn.closed
    assert r.wait(10).ok
    w.close(10)


@pytest.mark.parametrize(
    "value", ["100000000000000000000000s", "9223372036854775807s", "18446744073709551615", "1e308s", "366d"]
)
@pytest.mark.parametrize("key", ["client.request-timeout", "client.writer.delivery-timeout", "client.writer.batch-timeout"])
def test_durations_beyond_a_year_are_invalid_config(key, value) -> None:
    with pytest.raises(fw.InvalidConfigError, match="365 days"):
        fw.Config({key: value})
    with pytest.raises(fw.InvalidConfigError, match=key):
        fw.connect("embedded", {key: value})


def test_the_longest_valid_duration_works_end_to_end() -> None:
    """The longest accepted duration (365 days) in every duration key: creating a table and
    writing (where "9223372036854775807s" used to overflow an Instant and panic) work."""
    keys = ["client.request-timeout", "client.writer.delivery-timeout", "client.writer.buffer.wait-timeout"]
    c = fw.connect(config={**{k: "365d" for k in keys}, "client.writer.batch-timeout": "5ms"})
    _works(c)


def test_inject_delay_rejects_nan_and_negative(conn, log_table, engine) -> None:
    for bad in (-1.0, float("nan"), -math.inf):
        with pytest.raises(ValueError):
            engine.inject_delay(log_table, 0, bad)
    assert engine.pending_faults(log_table, 0) == 0
    engine.inject_delay(log_table, 0, math.inf)  # the longest bounded delay; not a panic
    assert engine.pending_faults(log_table, 0) == 1
    engine.clear_faults()
    w = conn.get_table(log_table).new_append().create_writer()
    assert w.append({"id": 1, "msg": "x"}).wait(10).ok


def test_config_repr_never_shows_secrets() -> None:
    jaas = 'org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required username="u" password="jaas-secret-1";'
    cfg = fw.Config(
        {
            "client.security.protocol": "SASL",
            "client.security.sasl.username": "admin",
            "client.security.sasl.password": "pw-secret-2",
            "client.security.sasl.jaas.config": jaas,
        }
    )
    for text in (repr(cfg), str(cfg)):
        assert "pw-secret-2" not in text and "jaas-secret-1" not in text, text
    assert "client.security.sasl.username" in repr(cfg) and "admin" in repr(cfg), "non-secret keys are still shown"


@pytest.mark.parametrize("value", ["0", "1023", "2049mb", "-1", "lots"])
def test_response_max_size_out_of_range_is_invalid_config(value: str) -> None:
    with pytest.raises(fw.InvalidConfigError) as info:
        fw.connect("embedded", {"client.response-max-size": value})
    assert "client.response-max-size" in str(info.value)


def test_response_max_size_in_range_is_accepted() -> None:
    for value in ["1kb", "16mb", "2gb"]:
        with fw.connect("embedded", {"client.response-max-size": value}) as c:
            assert c.admin().list_databases() == ["fluss"]
