"""The converter's cleaning, run with origins (ingest.traced.Traced), gives the converter's text exactly
(ingest.traced.Plain), and each character leads back to the raw character it came from."""

from __future__ import annotations

import random

from ingest.pdf_pages import _BLANK_RUNS, _CLEAN, _LINE_EDGE_SPACES, _LINE_SPLIT, _SPACES
from ingest.traced import NO_ORIGIN, Plain, Traced, offsets_map

TRICKY = [
    "a",
    " ",
    "\n",
    "\r\n",
    "\t",
    "\xa0",
    "\ufb01",
    "\ufb03",
    "\ufffe",
    "\xad",
    "\u200b",
    "e\u0301",
    "\u037e",
    "\u1100\u1161",
    "x",
    "Z",
    "$247.83",
    "  ",
    "\x0c",
]


def cleaned(kind, raw: str, gaps_seed: int):
    separators = [m.span() for m in _LINE_SPLIT.finditer(raw)]
    rng = random.Random(gaps_seed)
    gaps = [rng.random() < 0.3 for _ in range(len(separators) + 1)]
    page = kind.lines(raw, separators, gaps).translate(_CLEAN).nfc()
    page = page.sub(_SPACES, " ").sub(_LINE_EDGE_SPACES, "\n")
    return page.sub(_BLANK_RUNS, "\n\n").strip(" \n")


def test_the_traced_cleaning_gives_the_converters_text_on_any_mix_of_what_it_cleans():
    rng = random.Random(7)
    for n in range(3000):
        raw = "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 30)))
        plain, traced = cleaned(Plain, raw, n), cleaned(Traced, raw, n)
        assert traced.text == plain.text, (raw, traced.text, plain.text)
        assert len(traced.origins) == len(traced.text)
        assert all(o == NO_ORIGIN or 0 <= o < len(raw) for o in traced.origins)


def test_each_character_comes_from_the_raw_one_that_shows_it():
    raw = "The \ufb01nancial  state-\r\nments\ufffe of  Caf\u0065\u0301\xa0Ltd\u037e fees"
    traced = cleaned(Traced, raw, 0)
    assert traced.text == "The financial state-\nments- of Café Ltd; fees"
    for ch, origin in zip(traced.text, traced.origins):
        source = raw[origin]
        if ch in "fi" and source == "\ufb01":
            continue  # both letters of the ligature come from its one glyph
        assert (
            source == ch
            or (ch, source) in {("-", "\ufffe"), ("é", "e"), (" ", "\xa0"), (";", "\u037e")}
            or (ch == "\n" and source == "\r")
        ), (ch, source)
    f, i = traced.text.index("fi"), traced.text.index("fi") + 1
    assert traced.origins[f] == traced.origins[i] == raw.index("\ufb01")


def test_a_blank_line_the_cleaning_adds_comes_from_nowhere():
    raw = "First paragraph.\r\nSecond paragraph."
    traced = Traced.lines(raw, [m.span() for m in _LINE_SPLIT.finditer(raw)], [False, True])
    assert traced.text == "First paragraph.\n\nSecond paragraph."
    assert traced.origins[16:18] == [16, NO_ORIGIN]


def test_a_stored_text_that_differs_maps_through_the_common_parts():
    fresh = "Alpha beta.\n\nGamma delta."
    stored = "Alpha beta.\nGamma delta."
    to_fresh = offsets_map(stored, fresh)
    assert fresh[to_fresh(stored.index("Gamma"))] == "G"
    assert [to_fresh(i) for i in range(len(stored))] != list(range(len(stored)))
    same = offsets_map(fresh, fresh)
    assert same(5) == 5
