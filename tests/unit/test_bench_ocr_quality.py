"""How bench/bench_ocr_quality.py finds a gold part in OCR text, and which pages bench_ocr's scans turn or speck."""

from __future__ import annotations

from bench.bench_ocr import scan_kind
from bench.bench_ocr_quality import best_stretch, within_tolerance


def test_best_stretch_finds_the_closest_stretch_and_its_bounds():
    assert best_stretch("abcdef", "zzzabcdefzz") == (0, 3, 9)
    edits, start, end = best_stretch("hello", "xxhelxloyy")
    assert edits == 1 and "xxhelxloyy"[start:end] in ("helxlo", "helxl")


def test_a_misread_character_is_tolerated_in_a_long_part_only():
    part = "theagreementshallbegovernedbythelawsofdelaware"  # 46 characters: 2 edits allowed
    read = "xx" + part.replace("l", "1", 1) + "yy"
    assert within_tolerance(part, read) is not None
    assert within_tolerance(part, "xx" + part.replace("e", "c", 3) + "yy") is None  # 3 edits
    assert within_tolerance("delaware", "de1aware") is None  # too short for one edit: exact only
    assert within_tolerance("delaware", "lawsofdelaware") == (6, 14)


def test_scan_kinds_turn_every_fourth_and_speck_every_fifth_page():
    assert [scan_kind(n) for n in range(8)] == [
        "clean",
        "clean",
        "clean",
        "turned",
        "specked",
        "clean",
        "clean",
        "turned",
    ]
    assert scan_kind(19) == "turned+specked"
