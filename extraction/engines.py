"""The extraction engine a run uses, chosen by ``EXTRACTION_ENGINE``: ``auto`` is the Claude engine
when ``ANTHROPIC_API_KEY`` is set, else the offline engine. Both answer through the interface in
``extraction.outcome``."""

from __future__ import annotations

from django.conf import settings

from extraction.agent.engine import AnthropicEngine
from extraction.offline.engine import OfflineEngine
from extraction.outcome import Engine

ENGINES = ("anthropic", "offline")


def resolve_engine_name(name: str | None = None) -> str:
    name = (name or settings.EXTRACTION_ENGINE or "auto").lower()
    if name == "auto":
        return "anthropic" if settings.ANTHROPIC_API_KEY else "offline"
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; choose auto, anthropic or offline")
    return name


def get_engine(name: str | None = None, **kwargs) -> Engine:
    if resolve_engine_name(name) == "anthropic":
        return AnthropicEngine(**kwargs)
    return OfflineEngine(**kwargs)
