"""Helpers shared by the test modules (importable as ``helpers``)."""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable, List

import fluss_writer as fw

_names = itertools.count()

LOG_SCHEMA = [("id", "BIGINT", False), ("msg", "STRING")]



def make_table(conn: fw.Connection, columns: Any = None, *, buckets: int = 1, pk: Any = None,
               bucket_keys: Any = None) -> str:
    name = f"fluss.t{next(_names)}"
    schema = fw.Schema(columns or LOG_SCHEMA, primary_keys=pk)
    conn.admin().create_table(name, fw.TableDescriptor(schema, bucket_count=buckets, bucket_keys=bucket_keys))
    return name




class Recorder:
    """A thread-safe list of completions with a wait helper."""

    def __init__(self) -> None:
        self.items: List[Any] = []
        self.threads: List[int] = []
        self.lock = threading.Lock()

    def __call__(self, c: fw.WriteCompletion) -> None:
        with self.lock:
            self.items.append(c)
            self.threads.append(threading.get_ident())

    def wait_for(self, n: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.items) < n:
            assert time.monotonic() < deadline, f"only {len(self.items)} of {n} callbacks ran"
            time.sleep(0.002)



def eventually(pred: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)
