"""Reading a page's HTML in tests: the attributes of its elements, as a screen reader's tree starts from them."""

from __future__ import annotations

from html.parser import HTMLParser


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, {name: value or "" for name, value in attrs}))


def elements(html: str, tag: str | None = None, cls: str | None = None) -> list[dict[str, str]]:
    """The attributes of each element of ``html`` named ``tag`` and/or carrying the class ``cls``, in order."""
    parser = _Tags()
    parser.feed(html)
    return [
        attrs
        for name, attrs in parser.found
        if (tag is None or name == tag) and (cls is None or cls in attrs.get("class", "").split())
    ]


def dangling_references(html: str) -> list[str]:
    """``attribute=id`` for each id that an aria-describedby, aria-labelledby or aria-controls of ``html``
    names and no element of it carries: a screen reader then reads nothing for it."""
    parser = _Tags()
    parser.feed(html)
    ids = {attrs["id"] for _, attrs in parser.found if attrs.get("id")}
    return [
        f"{name}={ref}"
        for _, attrs in parser.found
        for name in ("aria-describedby", "aria-labelledby", "aria-controls")
        for ref in attrs.get(name, "").split()
        if ref not in ids
    ]
