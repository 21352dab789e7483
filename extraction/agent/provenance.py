"""Provenance tags for context blocks.

Every block of document text that enters a prompt is headed by one line::

    === §8.2 Liability [source:msa.pdf | chunk:c_ab12,c_cd34 | p.41-42 | ¶118 | §8.2 Liability | @90211] ===

``chunk`` lists the chunk ids the block was built from (cite one of them),
``p.N`` or ``p.N-M`` the physical page(s), ``¶`` the paragraph index of the
first chunk, ``§`` its heading and ``@`` the absolute char offset of the block's
first character. ``render_tag``/``parse_tag`` round-trip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NO_SECTION = "(no heading)"


@dataclass(frozen=True)
class ProvenanceTag:
    source: str
    chunk_ids: tuple[str, ...]
    page_start: int
    page_end: int
    paragraph: int
    section: str
    offset: int

    @property
    def pages(self) -> str:
        if self.page_end != self.page_start:
            return f"{self.page_start}-{self.page_end}"
        return str(self.page_start)


def clean_field(value: str) -> str:
    """Make a value safe inside a tag: one line, no ``|``, ``[`` or ``]``, no ``===``."""
    value = " ".join(str(value).split())
    value = value.replace("|", "/").replace("[", "(").replace("]", ")")
    while "===" in value:
        value = value.replace("===", "==")
    return value


def render_tag(tag: ProvenanceTag) -> str:
    section = clean_field(tag.section) or NO_SECTION
    ids = ",".join(clean_field(c).replace(",", ";") for c in tag.chunk_ids)
    return (
        f"=== §{section} [source:{clean_field(tag.source)} | chunk:{ids} | p.{tag.pages} "
        f"| ¶{tag.paragraph} | §{section} | @{tag.offset}] ==="
    )


_TAG_RE = re.compile(
    r"^=== §(?P<head>.*?) \[source:(?P<source>[^|\]]*) \| chunk:(?P<ids>[^|\]]*) "
    r"\| p\.(?P<p1>\d+)(?:-(?P<p2>\d+))? \| ¶(?P<para>-?\d+) \| §(?P<section>[^|\]]*) "
    r"\| @(?P<offset>\d+)\] ===$"
)


def parse_tag(line: str) -> ProvenanceTag | None:
    """Parse one tag line; None if the line is not a tag."""
    m = _TAG_RE.match(line.strip())
    if not m:
        return None
    section = m["section"]
    p1 = int(m["p1"])
    return ProvenanceTag(
        source=m["source"],
        chunk_ids=tuple(i for i in m["ids"].split(",") if i),
        page_start=p1,
        page_end=int(m["p2"]) if m["p2"] else p1,
        paragraph=int(m["para"]),
        section="" if section == NO_SECTION else section,
        offset=int(m["offset"]),
    )


def render_block(tag: ProvenanceTag, text: str) -> str:
    """Tag line, newline, then the text exactly as given."""
    return f"{render_tag(tag)}\n{text}"


def parse_blocks(context: str) -> list[tuple[ProvenanceTag, str]]:
    """Split a context string back into ``(tag, text)`` pairs.

    Blocks are joined by ``join_blocks`` (a blank line between blocks); the text of
    each block is returned exactly as it was rendered.
    """
    out: list[tuple[ProvenanceTag, str]] = []
    lines = context.split("\n")
    current: ProvenanceTag | None = None
    body: list[str] = []
    for line in lines:
        tag = parse_tag(line) if line.startswith("=== §") else None
        if tag is not None:
            if current is not None:
                out.append((current, _strip_separator("\n".join(body))))
            current, body = tag, []
        elif current is not None:
            body.append(line)
    if current is not None:
        out.append((current, "\n".join(body)))
    return out


BLOCK_SEPARATOR = "\n\n"


def join_blocks(blocks: list[str]) -> str:
    return BLOCK_SEPARATOR.join(blocks)


def _strip_separator(body: str) -> str:
    # join_blocks put exactly one BLOCK_SEPARATOR after each block but the last
    return body[: -(len(BLOCK_SEPARATOR) - 1)] if body.endswith("\n") else body
