"""``custom_id`` of a batch request <-> (run, document, clause type). Pure.

The API wants ``^[a-zA-Z0-9_-]{1,64}$``, unique within a batch. Ours is
``r<run>-d<document>-t<clause type>``: unique per ``ClauseTask`` (one per
(run, document, clause type)), so it is unique in every batch and maps back to
its rows without a lookup table.
"""

from __future__ import annotations

import re
from typing import NamedTuple

API_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_OURS = re.compile(r"^r(\d+)-d(\d+)-t(\d+)$")


class Key(NamedTuple):
    run_id: int
    document_id: int
    clause_type_id: int


def custom_id(run_id: int, document_id: int, clause_type_id: int) -> str:
    value = f"r{int(run_id)}-d{int(document_id)}-t{int(clause_type_id)}"
    if not API_PATTERN.match(value):  # 64 chars hold ids far beyond any database's
        raise ValueError(f"custom_id {value!r} breaks the API's pattern")
    return value


def parse(value: str) -> Key:
    """The (run, document, clause type) ids a custom_id names; ValueError when it is not ours."""
    m = _OURS.match(value or "")
    if m is None:
        raise ValueError(f"not a bulk custom_id: {value!r}")
    return Key(int(m[1]), int(m[2]), int(m[3]))
