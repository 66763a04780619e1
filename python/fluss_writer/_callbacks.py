"""Default handling of callbacks that raise (the writer's ``on_callback_error`` default)."""

from __future__ import annotations

import logging

_log = logging.getLogger("fluss_writer")


def default_on_callback_error(exc: BaseException, operation: str) -> None:
    """Log a raising completion callback with the operation it was called for (C8)."""
    _log.error("completion callback for %s raised %r", operation, exc, exc_info=exc)
