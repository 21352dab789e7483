"""The Claude engine: the official ``anthropic`` SDK driving the agent loop.

The first question of a clause carries its context: the whole document when it is
under 12,000 characters, else the top-K retrieved chunks in reading order, every
block provenance-tagged: the K chunks the caller retrieved (the engagement's K; ``k`` caps
them when given). ``max_turns=1`` is the single-shot path (the agent is given the two answer
tools only, and answers at once); the default lets the agent read more first. With ``rerank``
(``CLAUDE_RERANK``) the engine hands the caller a ``Reranker`` (``extraction.agent.rerank``), which
picks those K among the top fused candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import anthropic
from django.conf import settings

from extraction.agent import doc_type, skill_loader
from extraction.agent.compaction import CompactionPolicy
from extraction.agent.context import (
    WHOLE_DOC_MAX_CHARS,
    ContextPack,
    clause_context,
    segment_blocks,
)
from extraction.agent.loop import Agent, AgentState
from extraction.agent.rerank import Reranker
from extraction.catalog import ClauseType
from extraction.docview import DocumentView, ScoredChunk
from extraction.outcome import ClauseOutcome, EngineError


def make_client(*, max_retries: int | None = None) -> anthropic.Anthropic:
    """The SDK client from settings (API key, optional base URL, retries with backoff for 429/500/529)."""
    if not settings.ANTHROPIC_API_KEY:
        raise EngineError("ANTHROPIC_API_KEY is not set; use the offline engine")
    retries = settings.ANTHROPIC_MAX_RETRIES if max_retries is None else max_retries
    return anthropic.Anthropic(
        api_key=settings.ANTHROPIC_API_KEY,
        max_retries=retries,
        timeout=settings.ANTHROPIC_TIMEOUT,
        base_url=settings.ANTHROPIC_BASE_URL or None,
    )  # None: the SDK's default endpoint


def clause_pack(document: DocumentView, retrieved: Sequence[ScoredChunk], k: int | None) -> ContextPack:
    """Whole document (as tagged chunk blocks) under the threshold, else the retrieved chunks (the
    first ``k`` of them; None: all, the caller having retrieved its K)."""
    if len(document.text) < WHOLE_DOC_MAX_CHARS and document.chunks:
        return ContextPack(
            "whole", tuple(segment_blocks(document.chunks, source=document.source, pages=document.pages))
        )
    shown = len(retrieved) if k is None else k
    return clause_context(retrieved, source=document.source, pages=document.pages, k=shown)


class AnthropicSession:
    def __init__(self, agent: Agent, document: DocumentView, k: int | None):
        self.agent = agent
        self.document = document
        self.k = k

    @property
    def usage(self):
        return self.agent.usage

    def extract(self, clause: ClauseType, clause_id: str, retrieved: Sequence[ScoredChunk]) -> ClauseOutcome:
        try:
            return self.agent.run_clause(clause, clause_id, clause_pack(self.document, retrieved, self.k))
        except EngineError:
            self.agent.drop_unanswered_question()
            self.agent.state.current = None  # the next clause starts clean
            raise

    def snapshot(self) -> dict:
        return self.agent.snapshot()


class AnthropicEngine:
    name = "anthropic"

    def __init__(
        self,
        client: anthropic.Anthropic | None = None,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        max_turns: int | None = None,
        window_tokens: int | None = None,
        k: int | None = None,
        policy: CompactionPolicy | None = None,
        rerank: bool | None = None,
        rerank_model: str | None = None,
    ):
        self._client = client
        self.model = model or settings.ANTHROPIC_MODEL
        self.max_tokens = max_tokens or settings.ANTHROPIC_MAX_TOKENS
        self.max_turns = max_turns or settings.EXTRACTION_MAX_TURNS
        self.window_tokens = window_tokens or settings.ANTHROPIC_CONTEXT_WINDOW
        self.k = k  # None: every chunk the caller retrieved (the engagement's K)
        self.policy = policy or CompactionPolicy(window_tokens=self.window_tokens)
        self.rerank = settings.CLAUDE_RERANK if rerank is None else rerank
        self.rerank_model = rerank_model or settings.CLAUDE_RERANK_MODEL

    def reranker(self) -> Reranker | None:
        """A fresh ``Reranker`` (its own usage) for one document's session; None when the rerank is off."""
        if not self.rerank:
            return None
        return Reranker(self.client, self.rerank_model, pool=settings.CLAUDE_RERANK_POOL)

    def wants_retrieval(self, document: DocumentView) -> bool:
        """A document under the whole-text threshold goes in whole: no retrieval needed."""
        return not (len(document.text) < WHOLE_DOC_MAX_CHARS and document.chunks)

    def classify(self, document: DocumentView, choices: Sequence[str]):
        """The document's contract type (``extraction.agent.doc_type``); asked when its title named none."""
        return doc_type.ask_claude(document, choices, client=self.client, model=self.model)

    @property
    def client(self) -> anthropic.Anthropic:
        if self._client is None:
            self._client = make_client()
        return self._client

    def open_session(self, document, *, facts, types, search=None, snapshot=None, on_checkpoint=None):
        skills = skill_loader.list_skills()
        agent = Agent(
            self.client,
            model=self.model,
            document=document,
            facts=facts,
            types=types,
            search=search,
            skills=skills,
            skill_for=skill_loader.skill_for_clause_type,
            max_tokens=self.max_tokens,
            max_turns=self.max_turns,
            policy=self.policy,
            state=AgentState.from_snapshot(snapshot, max_tokens=self.max_tokens),
            on_checkpoint=on_checkpoint,
        )
        return AnthropicSession(agent, document, self.k)
