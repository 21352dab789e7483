"""The text of a file's bytes: byte-order marks, declared charsets, UTF-8, and a guess of a legacy
code page for a non-Latin text with no charset (``charset_normalizer``). Pure."""

from __future__ import annotations

import codecs
import re
import unicodedata

import charset_normalizer

from ingest.sniff import bare_utf16

_DECLARATION_BYTES = 2048
# <meta charset="x">, <meta http-equiv="Content-Type" content="text/html; charset=x">,
# <?xml ... encoding="x"?>
_DECLARED_CHARSET = re.compile(
    rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)|<\?xml\b[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)""",
    re.I,
)
# Encodings of scripts cp1252 cannot write, as charset_normalizer names them. A multi-byte one (Japanese,
# Chinese, Korean) is taken as guessed: bytes that decode strictly in it are no accident. A single-byte one
# (Cyrillic, Greek, Hebrew, Arabic, Thai) decodes any bytes, so it is taken only when the text then reads as
# a language (coherence, charset_normalizer's letter-frequency score, at least _MIN_COHERENCE); a row of
# accented capitals in cp1252 was otherwise "Russian". Its guesses among Latin code pages (cp1250, cp775,
# mac_latin2...) are never taken: for Western text with a few accents it picks one as readily as cp1252.
_MULTI_BYTE_CODECS = frozenset(
    [
        "cp932",
        "shift_jis",
        "shift_jis_2004",
        "shift_jisx0213",
        "euc_jp",
        "euc_jis_2004",
        "euc_jisx0213",
        "gb18030",
        "gb2312",
        "gbk",
        "big5",
        "big5hkscs",
        "cp950",
        "cp949",
        "euc_kr",
        "johab",
    ]
)
_SINGLE_BYTE_CODECS = frozenset(
    [
        "cp1251",
        "koi8_r",
        "koi8_u",
        "mac_cyrillic",
        "iso8859_5",
        "cp866",
        "cp855",
        "kz1048",
        "ptcp154",
        "cp1253",
        "iso8859_7",
        "mac_greek",
        "cp1255",
        "iso8859_8",
        "cp862",
        "cp1256",
        "iso8859_6",
        "cp720",
        "cp864",
        "cp874",
        "tis_620",
        "iso8859_11",
    ]
)
_MIN_COHERENCE = 0.3
# Code pages of one script that agree on most letters and differ on a few (Greek: cp1253 has Ά at 0xA2, where
# ISO 8859-7 has a quotation mark, and a pilcrow where ISO 8859-7 has Ά). charset_normalizer's letter
# frequencies cannot tell them apart; the reading with more letters can.
_SIBLING_CODECS = {"cp1253": "iso8859_7", "iso8859_7": "cp1253", "cp1255": "iso8859_8", "iso8859_8": "cp1255"}
_DETECT_BYTES = 64 * 1024
_LEFT_TO_HEURISTICS = frozenset({"utf-8", "ascii", "iso8859-1", "cp1252", "utf-16", "utf-16-le", "utf-16-be"})


def decode_html(data: bytes) -> str:
    """Bytes of an HTML file to str: as :func:`decode_text`, except that bytes which are not valid
    UTF-8 are read in the encoding the file declares near its start (``<meta charset>``, an
    ``http-equiv`` content type, an XML prolog) when Python knows it. Pages in iso-8859-2,
    windows-1251 or Shift_JIS were otherwise read as cp1252 and every letter beyond ASCII garbled.
    A declared ASCII or latin-1 is left to the heuristics, which read it as cp1252 as browsers do."""
    if not data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            declared = declared_encoding(data)
            if declared:
                try:
                    return _tidy_text(data.decode(declared, errors="replace"))
                except LookupError:  # a codec that is no text encoding ("base64", "rot13")
                    pass
    return decode_text(data)


def declared_encoding(data: bytes) -> str | None:
    """The Python codec named by the charset an HTML/XML file declares in its first
    :data:`_DECLARATION_BYTES` bytes, or None (none declared, unknown, UTF-8 or an ASCII/latin-1 label)."""
    m = _DECLARED_CHARSET.search(data[:_DECLARATION_BYTES])
    if not m:
        return None
    try:
        name = codecs.lookup((m.group(1) or m.group(2)).decode("ascii")).name
    except (LookupError, UnicodeDecodeError):
        return None
    return None if name in _LEFT_TO_HEURISTICS else name


def decode_text(data: bytes) -> str:
    """Bytes of a text file to str, never failing: BOMs, then UTF-16 without one (see
    :func:`~ingest.sniff.bare_utf16`), then UTF-8, then a legacy encoding of a non-Latin script
    (:func:`non_latin_codec`), then cp1252, then latin-1.

    A UTF-8 file with a few stray bytes (a cp1252 apostrophe pasted in) stays UTF-8, the stray bytes
    replaced: read as cp1252 instead, every "§", "€" and curly quote of the file would be garbled.
    See :func:`_mostly_utf8` for "a few". Latin-1 is the last resort only for bytes with no valid
    multi-byte UTF-8 in them. Line ends become ``"\\n"`` and NUL characters are dropped.
    """
    if data.startswith(codecs.BOM_UTF8):
        text = data[3:].decode("utf-8", errors="replace")
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    elif codec := bare_utf16(data[:8192]):
        text = data[: len(data) // 2 * 2].decode(codec, errors="replace")
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            valid, bad = _utf8_counts(data)
            text = (
                data.decode("utf-8", errors="replace")
                if _mostly_utf8(valid, bad)
                else _single_byte(data, valid)
            )
    return _tidy_text(text)


def _tidy_text(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def _single_byte(data: bytes, valid_utf8: int) -> str:
    codec = non_latin_codec(data)
    if codec:
        return data.decode(codec, errors="replace")
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:  # bytes cp1252 leaves undefined
        if valid_utf8:  # latin-1 would garble those characters too; UTF-8 keeps them
            return data.decode("utf-8", errors="replace")
        return data.decode("latin-1")


def non_latin_codec(data: bytes) -> str | None:
    """The legacy encoding (Shift_JIS, GB18030, Big5, EUC-KR, cp1251, KOI8-R, cp1253...) of text that is not
    UTF-8 and is mostly in a script cp1252 cannot write, or None. Read as cp1252, such a contract came out
    with every letter garbled, and nothing said so. Only text whose bytes are at least a third high
    (non-ASCII) among its letters is asked about, and only a non-Latin guess of charset_normalizer's is
    taken (see :data:`_MULTI_BYTE_CODECS`): Western text (a few accented letters among ASCII ones) stays
    with cp1252, and so does text too short to tell. The guess is made on the first
    :data:`_DETECT_BYTES` bytes, cut after a line end (never inside a character)."""
    sample = data[:_DETECT_BYTES]
    if len(data) > _DETECT_BYTES and b"\n" in sample:
        sample = sample[: sample.rindex(b"\n") + 1]
    high = sum(1 for b in sample if b >= 0x80)
    ascii_letters = sum(1 for b in sample if 65 <= b <= 90 or 97 <= b <= 122)
    if high * 2 < ascii_letters:  # a high third (or more) of the letters
        return None
    best = charset_normalizer.from_bytes(sample).best()
    if best is None:
        return None
    if best.encoding in _MULTI_BYTE_CODECS:
        return best.encoding
    if best.encoding in _SINGLE_BYTE_CODECS and best.coherence >= _MIN_COHERENCE:
        return _more_letters(sample, best.encoding)
    return None


def _more_letters(sample: bytes, guess: str) -> str:
    """``guess``, or its sibling code page (:data:`_SIBLING_CODECS`) when that reads more of ``sample`` as
    letters and marks (Hebrew vowel points are marks that ISO 8859-8 lacks)."""
    sibling = _SIBLING_CODECS.get(guess)
    if sibling is None:
        return guess

    def letters(codec: str) -> int:
        return sum(unicodedata.category(ch)[0] in "LM" for ch in sample.decode(codec, errors="replace"))

    return sibling if letters(sibling) > letters(guess) else guess


def _utf8_counts(data: bytes) -> tuple[int, int]:
    """(valid multi-byte UTF-8 characters, invalid bytes) in ``data``."""
    decoded = data.decode("utf-8", errors="replace")
    bad = decoded.count("\ufffd")
    return sum(1 for ch in decoded if ord(ch) > 127) - bad, bad


def _mostly_utf8(valid: int, bad: int) -> bool:
    """True when bytes with ``valid`` multi-byte UTF-8 characters and ``bad`` invalid bytes are UTF-8 but
    for a few stray bytes: there are valid multi-byte characters, and no more invalid bytes than those.
    Cp1252 or latin-1 text has almost no valid multi-byte sequences (an
    accented letter followed by exactly the right continuation bytes); and of the two readings,
    UTF-8 then damages fewer characters (one replacement per stray byte, where cp1252 turns each
    valid character into two or three wrong ones)."""
    return valid > 0 and bad <= valid
