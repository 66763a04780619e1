"""The record type of ``Table.scan`` (read-back through the Fluss protocol)."""

from __future__ import annotations

from typing import Any, NamedTuple, Tuple


class ScannedRow(NamedTuple):
    """One record of a bucket's log, as ``Table.scan`` returns it.

    A tuple ``(offset, change_type, row)``, the same shape as
    ``fluss_writer.testing.engine(conn).scan(...)`` items (and equal to them): ``offset`` is the
    record's log offset, ``change_type`` one of ``"+A"`` (append-only), ``"+I"``, ``"-U"``,
    ``"+U"``, ``"-D"``, and ``row`` the column values as a tuple in schema order (``None`` for
    null).
    """

    offset: int
    change_type: str
    row: Tuple[Any, ...]
