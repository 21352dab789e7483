"""A contract's type asked of Claude, for documents whose title names none.

Ingest reads the type from the title when it can (``ingest.doctype``: 0.955 of cuad-dev). When it
cannot and a run's engine is Claude, the run asks Claude before the first clause, so CASE_FACTS
carries the type from then on:

* one Messages call over the whole-document context (``extraction.whole_document``: the text under
  12,000 characters, else the sections by priority, else the chunks retrieved for what kind of
  agreement it is), the
  ``classify_document`` tool forced; its ``doc_type`` is one of the engagement's type names
  (``ingest.doctype.type_choices``) or "Other", its ``evidence`` a passage of the document;
* the server looks for the evidence in the document text (normalised as citations are); an answer
  whose evidence is not there, or whose type is not on the list, gets one retry with the reason (a
  reply holding several calls: the first that passes is taken, else each gets its reason back);
* the type is saved only when the evidence was found and the type is not "Other"; either way the
  document is marked as asked (``doc_type_source`` "model"), so later runs do not ask again. A
  failed call (HTTP error, no connection, refusal) leaves it unmarked for the next run, and the
  run goes on without a type.

A bulk run through the Message Batches API asks the same question at once, not batched, when it
builds a document's first request (``bulk.build.Builder``), so its requests' CASE_FACTS carry the
type too.

An admin's type, or one given at upload, is never replaced (the save only fills an empty type).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

from extraction.claude_call import ClaudeCallError, create_message, plain_block, tool_input
from extraction.docview import DocumentView
from extraction.prompts import DOC_TYPE_SYSTEM, doc_type_question, rejected_results
from extraction.tool_schemas import OTHER_TYPE, classify_document_tool
from extraction.runs import add_usage
from extraction.usage import Usage
from extraction.verify import norm
from extraction.whole_document import DOC_TYPE_QUERIES, task_context
from ingest.doctype import type_choices
from ingest.models import Document

log = logging.getLogger(__name__)
MAX_TOKENS = 512
ATTEMPTS = 2  # the answer, and one retry told what was wrong


@dataclass(frozen=True)
class DocTypeAnswer:
    doc_type: str | None  # None: "Other", or no answer that passed the checks
    evidence: str = ""
    problem: str = ""  # why no type was taken (for the log)
    model: str = ""
    usage: Usage = field(default_factory=Usage)


def check_answer(answer: dict, choices: Sequence[str], document_text: str) -> str:
    """What is wrong with a ``classify_document`` input ("" when nothing is)."""
    doc_type, evidence = answer.get("doc_type"), answer.get("evidence")
    if doc_type != OTHER_TYPE and doc_type not in choices:
        return f"doc_type {doc_type!r} is not one of the listed types."
    if not isinstance(evidence, str) or not norm(evidence):
        return "evidence is missing: copy a short passage of the document that shows the type."
    if norm(evidence) not in norm(document_text):
        return (f"The evidence {evidence[:120]!r} is not in the document. Copy it character-for-character "
                "from the text you were shown.")
    return ""


def ask_claude(document: DocumentView, choices: Sequence[str], *, client, model: str) -> DocTypeAnswer:
    """Claude's answer for ``document``'s type; raises ``ClaudeCallError`` when the call fails."""
    tool = classify_document_tool(choices)
    pack = task_context(document, DOC_TYPE_QUERIES)
    messages = [doc_type_question(pack)]
    usage, problem, response_model = Usage(), "", model
    for _ in range(ATTEMPTS):
        response = create_message(client, task="classify this document", model=model, max_tokens=MAX_TOKENS,
                                  system=DOC_TYPE_SYSTEM, tools=[tool], messages=messages,
                                  tool_choice={"type": "tool", "name": tool["name"]})
        usage.add(response.usage)
        response_model = response.model
        calls = [b for b in response.content if b.type == "tool_use"]
        if not any(b.name == tool["name"] for b in calls):
            problem = f"Claude answered without the classify_document tool (stop_reason {response.stop_reason})."
            break
        problems = {}  # a reply may hold several calls: the first that passes is taken, each other answered
        for call in calls:
            answer = tool_input(call.input)  # a string the SDK handed back would crash here and be refused
            if call.name != tool["name"]:
                problems[call.id] = f'There is no tool "{call.name}" here; answer with {tool["name"]}.'
                continue
            problems[call.id] = check_answer(answer, choices, document.text)
            if not problems[call.id]:
                kept = None if answer["doc_type"] == OTHER_TYPE else answer["doc_type"]
                return DocTypeAnswer(kept, answer["evidence"], model=response_model, usage=usage)
        problem = "; ".join(problems.values())  # for the log, when the retry fails too
        messages += [{"role": "assistant", "content": [plain_block(b) for b in response.content]},
                     rejected_results(problems)]  # the API refuses a tool_use left without its tool_result
    return DocTypeAnswer(None, problem=problem, model=response_model, usage=usage)


def needs_asking(document_id: int) -> bool:
    """True for a document with no type that nobody has asked Claude about yet (read afresh: the
    batch builder and a resumed run hold rows loaded before an earlier answer was saved)."""
    row = Document.objects.filter(pk=document_id).values("doc_type", "doc_type_source").first()
    return bool(row) and not row["doc_type"] and not row["doc_type_source"]


def classify_for_run(run, document, view: DocumentView, engine) -> DocTypeAnswer | None:
    """Ask the run's engine for ``document``'s type when it has none and the engine can tell (Claude);
    save what passed the checks and add the call's usage to the run. None when nothing was asked."""
    classify = getattr(engine, "classify", None)
    if classify is None or not needs_asking(document.pk):
        return None
    try:
        answer = classify(view, type_choices(document.engagement))
    except ClaudeCallError as exc:
        log.warning("document %s: its type was not asked of Claude: %s", document.pk, exc)
        return None
    add_usage(run, answer.usage, batch=False)  # one Messages call, at the standard rate even in a bulk run
    typed = {"doc_type": answer.doc_type} if answer.doc_type else {}
    Document.objects.filter(pk=document.pk, doc_type="").update(doc_type_source=Document.TypeSource.MODEL, **typed)
    if answer.doc_type is None:
        log.info("document %s: Claude gave no type (%s)", document.pk, answer.problem or "Other")
    else:
        log.info("document %s: Claude read its type as %s from %r", document.pk, answer.doc_type, answer.evidence)
    return answer
