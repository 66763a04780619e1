"""Configuration and timeouts follow the core's rules; no input panics (issue 11, defects 1
and 6).

* ``connect(bootstrap=None, config=None)``: the ``bootstrap`` argument and the
  ``bootstrap.servers`` key are one setting; both given and different is InvalidConfigError;
  neither (or an empty one) is InvalidConfigError saying what to pass (issue 27, defect 3).
* Duration keys take a string with its unit or a ``timedelta``; a Python number is
  InvalidConfigError naming both (issue 27, defect 4).
* ``Config.to_dict()`` redacts secrets unless asked (issue 27, defect 8); unknown keys that are
  pyfluss names, or near misses, get a "did you mean".
* Timeouts (``flush``, ``close``, ``wait``, ``Connection.close``): +inf and anything too long
  for a deadline is no bound; NaN and negative values are a ValueError.
* Configuration durations beyond 365 days are InvalidConfigError, not a panic now or later.
"""

from __future__ import annotations

import datetime
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


NO_ADDRESS = (
    'bootstrap.servers is not set: pass "host:port[,host:port]" for a Fluss cluster, '
    'or "embedded" (in memory) / "embedded:/path" (durable) for the embedded engine'
)


@pytest.mark.parametrize(
    "args",
    [(), (None, None), (None, {"client.writer.batch-timeout": "5ms"}), (None, fw.Config())],
    ids=["nothing", "none", "keys-only", "empty-Config"],
)
def test_connect_without_an_address_is_invalid_config(args) -> None:
    with pytest.raises(fw.InvalidConfigError) as info:
        fw.connect(*args)
    assert info.value.message == NO_ADDRESS
    assert info.value.code_name == "INVALID_CONFIG"


@pytest.mark.parametrize("args", [("",), ("  ",), (None, {"bootstrap.servers": ""})], ids=["arg", "blank", "key"])
def test_connect_with_an_empty_address_is_invalid_config(args) -> None:
    with pytest.raises(fw.InvalidConfigError) as info:
        fw.connect(*args)
    assert info.value.message == NO_ADDRESS.replace("is not set", "is empty")


def test_the_embedded_engine_is_opened_when_named() -> None:
    c = fw.connect("embedded")
    assert "embedded" in repr(c)
    _works(c)
    _works(fw.connect(None, {"bootstrap.servers": "embedded", "client.writer.batch-timeout": "5ms"}))


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
    c2 = fw.connect("embedded")
    c2.close(1e19)
    c3 = fw.connect("embedded")
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
    c = fw.connect("embedded", {**{k: "365d" for k in keys}, "client.writer.batch-timeout": "5ms"})
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


def test_config_to_dict_redacts_secrets_unless_asked() -> None:
    jaas = 'a.b.PlainLoginModule required username="u" password="jaas-secret-1";'
    given = {
        "client.security.protocol": "SASL",
        "client.security.sasl.username": "admin",
        "client.security.sasl.password": "pw-secret-2",
        "client.security.sasl.jaas.config": jaas,
    }
    cfg = fw.Config(given)
    shown = cfg.to_dict()
    assert shown == {**given, "client.security.sasl.password": "***", "client.security.sasl.jaas.config": "***"}
    assert "pw-secret-2" not in str(shown) and "jaas-secret-1" not in str(shown)
    assert cfg.to_dict(reveal_secrets=True) == given
    with pytest.raises(TypeError):
        cfg.to_dict(True)  # type: ignore[misc]  # keyword only: a reveal is always spelled out


# ----- issue 27, defect 4: durations -----

DURATION_KEYS = [
    "client.request-timeout",
    "client.writer.batch-timeout",
    "client.writer.buffer.wait-timeout",
    "client.writer.delivery-timeout",
    "client.writer.retry-backoff",
    "client.writer.partition-idle-timeout",
    "client.writer.slow-callback-threshold",
]


@pytest.mark.parametrize("key", DURATION_KEYS)
@pytest.mark.parametrize("value", [30, 30.0, 0, True])
def test_a_number_for_a_duration_is_invalid_config_naming_both_forms(key, value) -> None:
    for make in (fw.Config, lambda d: fw.connect("embedded", d)):
        with pytest.raises(fw.InvalidConfigError) as info:
            make({key: value})
        m = info.value.message
        assert key in m and "timedelta(seconds=" in m and 's"' in m, m
    if type(value) is int and value == 30:
        assert 'such as "30s"' in m and "timedelta(seconds=30)" in m, m


@pytest.mark.parametrize(
    "delta, text",
    [
        (datetime.timedelta(seconds=30), "30s"),
        (datetime.timedelta(milliseconds=5), "5ms"),
        (datetime.timedelta(microseconds=1500), "1500us"),
        (datetime.timedelta(days=2, seconds=1), "172801s"),
        (datetime.timedelta(0), "0s"),
    ],
)
def test_a_timedelta_is_a_duration(delta, text) -> None:
    assert fw.Config({"client.request-timeout": delta}).to_dict() == {"client.request-timeout": text}


def test_timedeltas_configure_a_working_connection() -> None:
    c = fw.connect(
        "embedded",
        {
            "client.writer.batch-timeout": datetime.timedelta(milliseconds=5),
            "client.request-timeout": datetime.timedelta(seconds=30),
            "client.writer.buffer.wait-timeout": datetime.timedelta(seconds=5),
        },
    )
    _works(c)


def test_bad_timedeltas_and_timedeltas_for_other_keys_are_invalid_config() -> None:
    with pytest.raises(fw.InvalidConfigError, match="client.request-timeout"):
        fw.Config({"client.request-timeout": datetime.timedelta(seconds=-1)})
    with pytest.raises(fw.InvalidConfigError, match="365 days"):
        fw.Config({"client.request-timeout": datetime.timedelta(days=366)})
    with pytest.raises(fw.InvalidConfigError, match="365 days"):
        fw.Config({"client.request-timeout": datetime.timedelta.max})
    with pytest.raises(fw.InvalidConfigError, match="client.writer.batch-size is not a duration"):
        fw.Config({"client.writer.batch-size": datetime.timedelta(seconds=1)})


def test_duration_strings_keep_flusss_meaning() -> None:
    """A bare number in a string is milliseconds, as the Java client reads it; other keys still
    take Python numbers (sizes are bytes, counts are counts)."""
    assert fw.Config({"client.request-timeout": "30"}).to_dict() == {"client.request-timeout": "30"}
    cfg = fw.Config({"client.writer.batch-size": 16384, "client.writer.retries": 3})
    assert cfg.to_dict() == {"client.writer.batch-size": "16384", "client.writer.retries": "3"}


# ----- issue 27: pyfluss names and typos -----


@pytest.mark.parametrize(
    "theirs, ours",
    [
        ("writer.batch-timeout-ms", "client.writer.batch-timeout"),
        ("writer.batch-size", "client.writer.batch-size"),
        ("writer.acks", "client.writer.acks"),
        ("writer.retries", "client.writer.retries"),
        ("writer.request-max-size", "client.writer.request-max-size"),
        ("security.sasl.username", "client.security.sasl.username"),
    ],
)
def test_pyfluss_key_names_get_a_did_you_mean(theirs, ours) -> None:
    with pytest.raises(fw.InvalidConfigError) as info:
        fw.Config({theirs: "1"})
    assert f'did you mean "{ours}"' in info.value.message and "pyfluss" in info.value.message


def test_typos_get_a_did_you_mean_and_strangers_the_key_list() -> None:
    with pytest.raises(fw.InvalidConfigError, match='did you mean "client.writer.batch-size"'):
        fw.Config({"client.writer.batchsize": "1mb"})
    with pytest.raises(fw.InvalidConfigError, match='did you mean "bootstrap.servers"'):
        fw.connect(None, {"bootstrap_servers": "embedded"})
    with pytest.raises(fw.InvalidConfigError, match="known keys: bootstrap.servers") as info:
        fw.Config({"something.else": "1"})
    assert "did you mean" not in info.value.message


# ----- issue 27, defect 5: argument errors are ValueErrors -----


def test_invalid_config_error_is_a_value_error(conn, log_table) -> None:
    assert issubclass(fw.InvalidConfigError, ValueError)
    assert issubclass(fw.InvalidConfigError, fw.FlussWriterError)
    with pytest.raises(ValueError, match="max_pending_callbacks"):
        conn.get_table(log_table).new_append().create_writer(max_pending_callbacks=0)
    with pytest.raises(ValueError, match="unknown configuration key"):
        fw.Config({"no.such.key": "1"})


@pytest.mark.parametrize("value", ["0", "1023", "2049mb", "-1", "lots"])
def test_response_max_size_out_of_range_is_invalid_config(value: str) -> None:
    with pytest.raises(fw.InvalidConfigError) as info:
        fw.connect("embedded", {"client.response-max-size": value})
    assert "client.response-max-size" in str(info.value)


def test_response_max_size_in_range_is_accepted() -> None:
    for value in ["1kb", "16mb", "2gb"]:
        with fw.connect("embedded", {"client.response-max-size": value}) as c:
            assert c.admin().list_databases() == ["fluss"]
