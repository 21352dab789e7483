"""One batch request per clause task, built by the synchronous path's own agent.

``Builder.build`` opens an ``AnthropicEngine`` session (the same engine, agent,
prompts, tools and CASE_FACTS provider as ``extraction.pipeline``) whose client is a
``Relay``: the agent asks its question and the params it would send become the
batch request. Batch requests are single-shot (``max_turns=1``), so the agent sends
the two answer tools only (``extract_clause``, ``report_not_found``) with ``tool_choice:
any``. The conversation state the request was built from
is returned as ``snapshot``; the harvest reopens the session from it and feeds the
result in, so verification and any follow-up turn are the agent's too.

Each request is a fresh conversation for one (document, clause type): the clauses
of a document run side by side in a batch, not one after another. Its context is
retrieval's fused top K (the engagement's ``context_k``): the rerank (``CLAUDE_RERANK``)
is a synchronous call at the standard price, and is not asked for a batch request.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bulk.relay import NextRequest, Relay
from extraction import checkpoints, launch, retrieval
from extraction.agent.engine import AnthropicEngine
from extraction.catalog.sync import as_plain
from extraction.doc_type import classify_for_run
from extraction.docview import DocumentView, load_document

CACHE = {"type": "ephemeral"}


@dataclass
class Built:
    custom_id: str
    params: dict
    snapshot: dict

    @property
    def request(self) -> dict:
        return {"custom_id": self.custom_id, "params": self.params}


def with_tool_breakpoint(params: dict) -> dict:
    """``params`` with ``cache_control`` on the last tool too (the invariant tools are a cacheable
    prefix of their own; the system prefix already carries its breakpoint). Shared tool dicts
    are copied, never changed."""
    tools = list(params.get("tools") or [])
    if not tools or tools[-1].get("cache_control"):
        return params
    tools[-1] = {**tools[-1], "cache_control": dict(CACHE)}
    return {**params, "tools": tools}


class Lazy(Sequence):
    """Retrieval run on first use: the engine skips it when the whole document fits in the prompt."""

    def __init__(self, fetch: Callable[[], list]):
        self._fetch = fetch
        self._items: list | None = None

    def _get(self) -> list:
        if self._items is None:
            self._items = list(self._fetch())
        return self._items

    def __getitem__(self, i):
        return self._get()[i]

    def __len__(self):
        return len(self._get())

    def __iter__(self):
        return iter(self._get())


class Builder:
    """Builds the requests of one run: engine, clause types and recent documents are loaded once."""

    def __init__(
        self,
        run,
        *,
        retrieve: Callable | None = None,
        k: int | None = None,
        max_tokens: int | None = None,
        documents_cached: int = 16,
        client=None,
    ):
        self.run = run
        self.client = client  # the API's, for the one question not batched: an untyped contract's type
        self.model = run.model or None
        self.max_tokens = max_tokens
        self.types = launch.types_for(run)
        self.retrieve = retrieve or retrieval.retrieve
        self.k = k or run.engagement.context_k  # the engagement's K (its rerank is not asked here)
        self._views: OrderedDict[int, DocumentView] = OrderedDict()
        self._cap = documents_cached

    def view(self, document) -> DocumentView:
        view = self._views.pop(document.pk, None)
        if view is None:
            view = load_document(document)
            if self.client is not None:  # before its first request is built, so CASE_FACTS carry the type
                classify_for_run(
                    self.run, document, view, AnthropicEngine(client=self.client, model=self.model)
                )
        self._views[document.pk] = view
        while len(self._views) > self._cap:
            self._views.popitem(last=False)
        return view

    def session(self, document, snapshot: dict | None, client, on_checkpoint=None, facts=None):
        """An agent session on ``document`` (from ``snapshot``) talking to ``client``; CASE_FACTS
        come from the database unless ``facts`` provides them."""
        run = self.run
        engine = AnthropicEngine(
            client=client, model=self.model, max_turns=1, max_tokens=self.max_tokens, k=self.k
        )
        return engine.open_session(
            self.view(document),
            facts=facts or (lambda: checkpoints.facts_for(run, document)),
            types=self.types,
            search=retrieval.searcher(document),
            snapshot=copy.deepcopy(snapshot) if snapshot else None,
            on_checkpoint=on_checkpoint,
        )

    def build(self, item) -> Built:
        """The request for ``item`` (a ``BatchItem`` with its task): a fresh question, or the next
        turn of the conversation in ``item.snapshot``."""
        task = item.task
        document = task.document
        clause = as_plain(task.clause_type)
        session = self.session(document, item.snapshot, Relay())
        retrieved = [] if item.snapshot else Lazy(lambda: self.retrieve(document, clause, self.k))
        try:
            session.extract(clause, checkpoints.clause_id_for(document.pk, clause.slug), retrieved)
        except NextRequest as nxt:
            return Built(item.custom_id, with_tool_breakpoint(nxt.params), session.snapshot())
        raise RuntimeError(f"{item.custom_id}: the agent finished without a request to send")
