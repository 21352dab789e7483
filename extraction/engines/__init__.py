"""Extraction engines behind one interface (see ``base``), chosen by ``EXTRACTION_ENGINE``:
``auto`` = anthropic when ``ANTHROPIC_API_KEY`` is set, else offline."""
from __future__ import annotations

from django.conf import settings

from extraction.engines.base import (FAILED, FOUND, NOT_FOUND, UNVERIFIED, ClauseOutcome, Engine, EngineError,
                                     EngineSession, Interrupted, TransientEngineError)

ENGINES = ("anthropic", "offline")


def resolve_engine_name(name: str | None = None) -> str:
    name = (name or settings.EXTRACTION_ENGINE or "auto").lower()
    if name == "auto":
        return "anthropic" if settings.ANTHROPIC_API_KEY else "offline"
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; choose auto, anthropic or offline")
    return name


def get_engine(name: str | None = None, **kwargs) -> Engine:
    name = resolve_engine_name(name)
    if name == "anthropic":
        from extraction.engines.anthropic import AnthropicEngine

        return AnthropicEngine(**kwargs)
    from extraction.engines.offline import OfflineEngine

    return OfflineEngine(**kwargs)


__all__ = ["ClauseOutcome", "Engine", "EngineError", "EngineSession", "Interrupted", "TransientEngineError", "FOUND", "NOT_FOUND",
           "UNVERIFIED", "FAILED", "resolve_engine_name", "get_engine"]
