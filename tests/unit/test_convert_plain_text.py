"""Plain text: read in its encoding (legacy non-Latin code pages, both Greek ones, UTF-16 without a
byte order mark, UTF-8 with a stray cp1252 byte), with its own pages or estimated ones.
"""

from __future__ import annotations

import pytest

from ingest import sniff
from ingest.convert import convert_file, decode_text
from ingest.pages import page_of
from tests.unit.convert_helpers import CLAUSE, write


def test_non_utf8_text_is_decoded_without_crashing(tmp_path):
    converted = convert_file(write(tmp_path, "memo.txt", b"Caf\xe9 \x93quoted\x94 fee \x80100.\n"))
    assert "Café “quoted” fee €100." in converted.text
    assert decode_text(b"\x81\x8d raw bytes") == "\x81\x8d raw bytes"  # latin-1 as the last resort
    # a UTF-8 contract with one stray cp1252 byte stays UTF-8: its "§" and curly quotes are not garbled
    mostly = (
        "\u201cFees\u201d under \u00a7 4.2 \u2014 due in 30 days. ".encode() * 3 + b"Supplier\x92s invoice."
    )
    assert (
        decode_text(mostly)
        == "\u201cFees\u201d under \u00a7 4.2 \u2014 due in 30 days. " * 3 + "Supplier\ufffds invoice."
    )
    assert (
        decode_text("Pr\u00e9ambule \u00e0 l\u2019accord".encode("cp1252"))
        == "Pr\u00e9ambule \u00e0 l\u2019accord"
    )
    assert decode_text("Préambule".encode("utf-16")) == "Préambule"
    assert decode_text(b"\xef\xbb\xbfBOM first\r\nline two") == "BOM first\nline two"


NON_LATIN = [
    (
        "第3条（支払）甲は乙に対し、2026年3月1日までに金1,000,000円を支払う。本契約は日本法に準拠する。\n",
        "shift_jis",
    ),
    (
        "第3条（支付）甲方应于2026年3月1日前向乙方支付人民币100,000元。本合同受中华人民共和国法律管辖。\n",
        "gb18030",
    ),
    ("第3條（付款）甲方應於2026年3月1日前支付乙方新台幣100,000元。本合約受中華民國法律管轄。\n", "big5"),
    (
        "제3조 (지급) 갑은 2026년 3월 1일까지 을에게 1,000,000원을 지급한다. 본 계약은 대한민국 법률에 따른다.\n",
        "euc-kr",
    ),
    (
        "Статья 3. Покупатель оплачивает 100 000 рублей до 1 марта 2026 года. Договор регулируется правом РФ.\n",
        "cp1251",
    ),
    (
        "Статья 3. Покупатель оплачивает 100 000 рублей до 1 марта 2026 года. Договор регулируется правом РФ.\n",
        "koi8-r",
    ),
    (
        "Άρθρο 3. Ο Αγοραστής καταβάλλει 100.000 ευρώ έως την 1η Μαρτίου 2026. Διέπεται από το ελληνικό δίκαιο.\n",
        "cp1253",
    ),
]


@pytest.mark.parametrize("text,codec", NON_LATIN, ids=[codec for _, codec in NON_LATIN])
def test_text_in_a_legacy_non_latin_encoding_is_read_in_it(tmp_path, text, codec):
    # a Japanese, Chinese, Korean, Russian or Greek contract saved in its legacy encoding (not UTF-8) was read as
    # cp1252: the document became "ready" with every letter garbled ("–{Œ_–ñ‚Í"), nothing in it to find or quote
    converted = convert_file(write(tmp_path, "contract.txt", text.encode(codec) * 3))
    assert converted.text.strip() == (text * 3).strip()
    page = f"<html><body><p>{text.strip()}</p></body></html>"  # a web page that declares no charset
    assert text.strip() in convert_file(write(tmp_path, "contract.html", page.encode(codec))).text
    # Western text in cp1252 stays cp1252
    for western in (
        "Der Käufer zahlt den Kaufpreis binnen 30 Tagen; Gerichtsstand ist München, Gewährleistung zwei Jahre.",
        "Le présent contrat est régi par le droit français ; les parties élisent domicile à leur siège.",
        "Fee schedule: café service at €100 per month — payable on receipt, “net” of taxes.",
    ):
        assert decode_text(western.encode("cp1252")) == western


# The two Greek code pages agree on every letter but the accented capitals: Ά is byte 0xA2 in cp1253 (where
# ISO 8859-7 has a quotation mark) and 0xB6 in ISO 8859-7 (where cp1253 has a pilcrow).
GREEK_BOTH_WAYS = [
    (
        "Άρθρο 1. Ορισμοί. Όλοι οι όροι έχουν την έννοια που τους αποδίδεται. Ή η σύμβαση λύεται.\n",
        "iso8859_7",
    ),
    ("Άρθρο 1. Ορισμοί. Όλοι οι όροι έχουν την έννοια που τους αποδίδεται. Ή η σύμβαση λύεται.\n", "cp1253"),
    ("Ένας Ώρα Ίδιο Ύψος Όρος Ή Άρθρο. Η σύμβαση ισχύει.\n", "cp1253"),
    (
        "Άρθρο 5. Αποζημίωση. Ο Πωλητής αποζημιώνει τον Αγοραστή. Άρθρο 6. Λύση. Άρθρο 7. Εφαρμοστέο δίκαιο.\n",
        "iso8859_7",
    ),
]


@pytest.mark.parametrize(
    "text,codec", GREEK_BOTH_WAYS, ids=[f"{codec}-{i}" for i, (_, codec) in enumerate(GREEK_BOTH_WAYS)]
)
def test_greek_text_keeps_its_accented_capitals_in_either_greek_code_page(text, codec):
    # charset_normalizer takes one Greek code page for the other about as often as not: "Άρθρο" (Article) came
    # out as "’ρθρο" or "¶ρθρο"; of the two readings the one with more letters is the text
    assert decode_text(text.encode(codec)) == text


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_text_without_a_byte_order_mark_is_read(tmp_path, codec):
    # some export tools write UTF-16 with no BOM: it was refused as "a binary file"
    text = "Fee: $247.83 due by 1 March 2026 (Pr\u00e9ambule \u00a7 4.2).\nCustomer cust_4711.\n" * 40
    converted = convert_file(write(tmp_path, "memo.txt", text.encode(codec)))
    assert converted.text.strip() == text.strip()
    assert decode_text(text.encode(codec)) == text
    # binary with NULs in both halves of its bytes is still no text
    assert sniff.bare_utf16(bytes(range(256)) * 8) is None


def test_utf8_text_with_a_stray_cp1252_byte_keeps_its_quotes_and_euros():
    # three valid characters, one stray byte: read as cp1252, then latin-1, every quote and "€" was garbled
    text = "The \u201cSupplier\u201d shall deliver the goods. The Customer@@s payment is due. Fee: \u20ac247.83.\n"
    data = text.encode().replace(b"@@", b"\x92")
    assert decode_text(data) == text.replace("@@", "\ufffd")
    # fewer valid characters than stray bytes, and bytes cp1252 leaves undefined: still never latin-1
    data = "Notice \u201dsent\u201d.".encode() + b" Supplier\x92s, Buyer\x92s and Agent\x92s copies."
    assert decode_text(data).startswith("Notice \u201dsent\u201d. Supplier")


def test_text_with_form_feeds_keeps_its_pages(tmp_path):
    converted = convert_file(
        write(tmp_path, "paged.txt", b"Page one text.\fPage two text.\fPage three text.")
    )
    assert converted.pages_estimated is False
    assert len(converted.pages) == 3
    assert page_of(converted.text.index("Page three"), converted.pages) == 3
    # pdftotext ends every page with a form feed, the last one too: that makes no empty fourth page
    trailing = convert_file(
        write(tmp_path, "pdftotext.txt", b"Page one text.\fPage two text.\fPage three text.\f")
    )
    assert len(trailing.pages) == 3


def test_long_text_gets_estimated_pages(tmp_path):
    body = "\n\n".join(f"{i}. " + CLAUSE * 4 for i in range(1, 40)).encode()
    converted = convert_file(write(tmp_path, "long.md", body))
    assert converted.kind == "markdown" and converted.pages_estimated is True
    assert len(converted.pages) > 3
    assert "".join(converted.text.split()) == "".join(body.decode().split()), (
        "nothing lost or added but page breaks"
    )
