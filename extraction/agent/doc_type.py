"""A contract's type asked of Claude (pure: the call and its checks; recording the answer is
``extraction.doc_type``'s).

One Messages call over the whole-document context (``extraction.agent.whole_document``), the
``classify_document`` tool forced; its ``doc_type`` is one of the engagement's type names or
"Other", its ``evidence`` a passage of the document. The server looks for the evidence in the
document text (normalised as citations are); an answer whose evidence is not there, or whose type is
not on the list, gets one retry with the reason (a reply holding several calls: the first that
passes is taken, else each gets its reason back).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from extraction.agent.claude_call import create_message, plain_block, tool_input
from extraction.agent.prompts import (
    DOC_TYPE_SYSTEM,
    doc_type_question,
    rejected_results,
)
from extraction.agent.tool_schemas import OTHER_TYPE, classify_document_tool
from extraction.agent.whole_document import DOC_TYPE_QUERIES, task_context
from extraction.docview import DocumentView
from extraction.usage import Usage
from extraction.verify import norm

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
        return (
            f"The evidence {evidence[:120]!r} is not in the document. Copy it character-for-character "
            "from the text you were shown."
        )
    return ""


def ask_claude(document: DocumentView, choices: Sequence[str], *, client, model: str) -> DocTypeAnswer:
    """Claude's answer for ``document``'s type; raises ``ClaudeCallError`` when the call fails."""
    tool = classify_document_tool(choices)
    pack = task_context(document, DOC_TYPE_QUERIES)
    messages = [doc_type_question(pack)]
    usage, problem, response_model = Usage(), "", model
    for _ in range(ATTEMPTS):
        response = create_message(
            client,
            task="classify this document",
            model=model,
            max_tokens=MAX_TOKENS,
            system=DOC_TYPE_SYSTEM,
            tools=[tool],
            messages=messages,
            tool_choice={"type": "tool", "name": tool["name"]},
        )
        usage.add(response.usage)
        response_model = response.model
        calls = [b for b in response.content if b.type == "tool_use"]
        if not any(b.name == tool["name"] for b in calls):
            problem = (
                f"Claude answered without the classify_document tool (stop_reason {response.stop_reason})."
            )
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
        messages += [
            {"role": "assistant", "content": [plain_block(b) for b in response.content]},
            rejected_results(problems),
        ]  # the API refuses a tool_use left without its tool_result
    return DocTypeAnswer(None, problem=problem, model=response_model, usage=usage)
