"""Find hidden text (``w:vanish``) in a WordprocessingML part.

Word does not show or print text formatted as hidden, but mammoth reads it like any other text.
It stays in the converted text (nothing of the document is dropped), and :mod:`ingest.docx_prep`
tells the reviewer it is there. Text counts as hidden when its run is marked hidden directly,
or by its character style or its paragraph's style (``basedOn`` styles followed); a direct
``w:vanish w:val="0"`` shows it again. A hidden paragraph mark alone (``w:pPr/w:rPr/w:vanish``)
hides no words and does not count.

Pure: lxml elements in, plain values out; no Django.
"""

from __future__ import annotations

from lxml import etree

_OFF = ("0", "false", "off")


def hidden_styles(styles: etree._Element | None, w: str) -> set[str]:
    """Ids of the styles whose run properties hide text, their ``basedOn`` styles followed."""
    own: dict[str, bool] = {}
    parent: dict[str, str] = {}
    for style in styles.iterfind(f"{{{w}}}style") if styles is not None else ():
        style_id = style.get(f"{{{w}}}styleId", "")
        setting = _vanish(style.find(f"{{{w}}}rPr"), w)
        if setting is not None:
            own[style_id] = setting
        based_on = style.find(f"{{{w}}}basedOn")
        if based_on is not None:
            parent[style_id] = based_on.get(f"{{{w}}}val", "")
    hidden = set()
    for style_id in set(own) | set(parent):
        seen: set[str] = set()
        current: str | None = style_id
        while current and current not in own and current not in seen:
            seen.add(current)
            current = parent.get(current)
        if current is not None and own.get(current):
            hidden.add(style_id)
    return hidden


def has_hidden_text(root: etree._Element, w: str, styles: set[str]) -> bool:
    """Whether any run with words in the part ``root`` is hidden (see the module doc)."""
    for run in root.iter(f"{{{w}}}r"):
        if not any(t.text and t.text.strip() for t in run.iterfind(f"{{{w}}}t")):
            continue
        properties = run.find(f"{{{w}}}rPr")
        direct = _vanish(properties, w)
        if direct is not None:
            if direct:
                return True
            continue
        if _style(properties, "rStyle", w) in styles:
            return True
        paragraph = next(run.iterancestors(f"{{{w}}}p"), None)
        if paragraph is not None and _style(paragraph.find(f"{{{w}}}pPr"), "pStyle", w) in styles:
            return True
    return False


def _vanish(properties: etree._Element | None, w: str) -> bool | None:
    """True/False where the run properties set ``w:vanish`` on/off, None where they say nothing."""
    vanish = properties.find(f"{{{w}}}vanish") if properties is not None else None
    if vanish is None:
        return None
    return vanish.get(f"{{{w}}}val", "true").lower() not in _OFF


def _style(properties: etree._Element | None, name: str, w: str) -> str | None:
    found = properties.find(f"{{{w}}}{name}") if properties is not None else None
    return found.get(f"{{{w}}}val") if found is not None else None
