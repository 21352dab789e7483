"""Row ids read from query strings and form fields."""

from __future__ import annotations


def id_param(value) -> int | None:
    """``value`` as a row id when it is plain ASCII digits, else None. (``str.isdigit`` alone also accepts
    "²" and other digits that ``int`` refuses, which made a crafted link a server error.)"""
    text = str(value if value is not None else "").strip()
    return int(text) if text.isascii() and text.isdigit() else None
