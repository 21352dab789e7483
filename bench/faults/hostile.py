"""The hostile files uploaded by ``bench_faults``: what a hostile user or a broken client sends, each a
:class:`Case` that builds its files in a folder and says what the app must answer.

``expect`` is one of:

* ``refused``: told at the upload, in words (the upload page's line for the file, or the form's error);
* ``ready``: taken and processed to a ready document;
* ``told``: refused at the upload or processed to a failed document, in words, never a 500 — for
  files the app may take or not, as long as the person who sent it is told why;
* ``handled``: ready, or refused/failed in words (a file a reader may open, e.g. a DOCX with a huge image).

``check`` names what is looked at besides (:mod:`bench.bench_faults`): ``secret`` (no text of
/etc/passwd in any document), ``escape`` (nothing written outside the media folder), ``script`` (no
live script on the pages that show the document or its name).
"""

from __future__ import annotations

import io
import os
import random
import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MiB = 1024 * 1024
SECRET_FILE = "/etc/passwd"
SECRET_MARK = "root:x:0:0"  # /etc/passwd's first line: never in a document's text
SENTENCE = (
    "The Supplier shall deliver lot {n} to the Buyer within thirty days of the order date, "
    "and the Buyer shall pay each invoice within forty five days. "
)


@dataclass
class Case:
    name: str
    what: str
    build: Callable[[Path], list[tuple[str, Path]]]  # folder -> (name sent, file) per file of one upload
    expect: str  # refused | ready | told | handled
    check: str = ""  # secret | escape | script
    quick: bool = True  # part of --quick


def contract_text(seed: int, sections: int = 12) -> str:
    """A plain-text contract whose bytes differ by ``seed`` (so no two uploads are one document)."""
    return "\n\n".join(
        f"## {n}. Clause {n} of agreement {seed}\n\n" + SENTENCE.format(n=n) * 4
        for n in range(1, sections + 1)
    )


# --------------------------------------------------------------------------- PDF written by hand


def raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (object 1 the catalog) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(data: bytes, *, flate: bool = False) -> bytes:
    extra = b" /Filter /FlateDecode" if flate else b""
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _pages_pdf(count: int, contents: bytes) -> bytes:
    """``count`` pages that all draw the one content stream ``contents`` (object 4)."""
    first_page = 5
    kids = b" ".join(b"%d 0 R" % (first_page + i) for i in range(count))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        contents,
    ] + [page] * count
    return raw_pdf(objects)


def pdf_flate_bomb(folder: Path, inflated: int = 512 * MiB) -> list[tuple[str, Path]]:
    """One page whose content stream inflates from about half a MiB to ``inflated`` bytes."""
    packer = zlib.compressobj(9)
    text = b"BT /F1 12 Tf 72 720 Td (A page whose drawing inflates to half a gigabyte.) Tj ET\n"
    parts = [packer.compress(text)]
    block = b" " * (16 * MiB)
    for _ in range(inflated // len(block)):
        parts.append(packer.compress(block))
    parts.append(packer.flush())
    path = folder / "flate-bomb.pdf"
    path.write_bytes(_pages_pdf(1, _stream(b"".join(parts), flate=True)))
    return [(path.name, path)]


def pdf_many_pages(folder: Path, pages: int) -> list[tuple[str, Path]]:
    text = b"BT /F1 12 Tf 72 720 Td (The Supplier shall deliver the goods.) Tj ET"
    path = folder / f"pages-{pages}.pdf"
    path.write_bytes(_pages_pdf(pages, _stream(text)))
    return [(path.name, path)]


def pdf_contract(folder: Path, name: str = "contract.pdf", pages: int = 12, seed: int = 0) -> Path:
    from demo import make_contract_pdf

    return make_contract_pdf(folder / name, pages=pages, seed=seed).path


def pdf_truncated(folder: Path) -> list[tuple[str, Path]]:
    whole = pdf_contract(folder, "whole.pdf", pages=12, seed=901).read_bytes()
    path = folder / "truncated.pdf"
    path.write_bytes(whole[: len(whole) * 6 // 10])
    return [(path.name, path)]


def pdf_corrupt(folder: Path) -> list[tuple[str, Path]]:
    path = folder / "corrupt.pdf"
    path.write_bytes(
        b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" + bytes(range(256)) * 40
    )
    return [(path.name, path)]


def pdf_encrypted(folder: Path) -> list[tuple[str, Path]]:
    from fpdf import FPDF
    from fpdf.enums import EncryptionMethod

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 6, "Confidential supply agreement between two parties. " * 10)
    pdf.set_encryption(owner_password="owner", user_password="reader", encryption_method=EncryptionMethod.RC4)
    path = folder / "encrypted.pdf"
    pdf.output(str(path))
    return [(path.name, path)]


# --------------------------------------------------------------------------- archives


def _zip_member(archive: zipfile.ZipFile, name: str, size: int, byte: bytes = b"a") -> None:
    block = byte * MiB
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED  # a ZipInfo's own default is stored, whatever the archive's
    with archive.open(info, "w", force_zip64=True) as member:
        for _ in range(size // MiB):
            member.write(block)


def zip_bomb(folder: Path) -> list[tuple[str, Path]]:
    path = folder / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("readme.txt", contract_text(11))
        _zip_member(archive, "contract.txt", 1024 * MiB)
    return [(path.name, path)]


def zip_nested_bomb(folder: Path) -> list[tuple[str, Path]]:
    """Three levels of ZIPs, ten of the level below in each: 100 copies of a 200 MiB text, 20 GiB in all."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        _zip_member(archive, "contract.txt", 200 * MiB)
    middle = io.BytesIO()
    with zipfile.ZipFile(middle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for i in range(10):
            archive.writestr(f"inner-{i}.zip", inner.getvalue())
    path = folder / "nested.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for i in range(10):
            archive.writestr(f"middle-{i}.zip", middle.getvalue())
    return [(path.name, path)]


def zip_escapes(folder: Path) -> list[tuple[str, Path]]:
    """Members named ``../..``, an absolute path and a symbolic link to /etc/passwd, beside a contract."""
    path = folder / "escapes.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("../../escape-dotdot.txt"), contract_text(21))
        archive.writestr(zipfile.ZipInfo("/tmp/escape-absolute.txt"), contract_text(22))
        link = zipfile.ZipInfo("link-to-passwd.txt")
        link.create_system = 3  # unix: the mode below is read
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, SECRET_FILE)
        archive.writestr("ok-contract.txt", contract_text(23))
    return [(path.name, path)]


def zip_many_files(folder: Path, count: int = 10_000) -> list[tuple[str, Path]]:
    path = folder / f"files-{count}.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for i in range(count):
            archive.writestr(f"tiny/{i:05d}.txt", f"Lease {i}: the Tenant pays rent.\n")
    return [(path.name, path)]


# --------------------------------------------------------------------------- office files


def _docx(folder: Path, name: str, text: str, image: Path | None = None) -> Path:
    import docx

    document = docx.Document()
    for paragraph in text.split("\n\n"):
        document.add_paragraph(paragraph)
    if image is not None:
        document.add_picture(str(image))
    path = folder / name
    document.save(str(path))
    return path


def _rewrite(path: Path, member: str, change: Callable[[str], str]) -> None:
    """Rewrite one member of a ZIP-based file in place."""
    with zipfile.ZipFile(path) as archive:
        parts = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for info, data in parts:
            if info.filename == member:
                data = change(data.decode()).encode()
            archive.writestr(info, data)


def _with_doctype(xml: str, root: str, entities: str, marker: str, reference: str) -> str:
    declaration, _, rest = xml.partition("?>")
    return f"{declaration}?><!DOCTYPE {root} [{entities}]>" + rest.replace(marker, reference)


XXE = f'<!ENTITY xxe SYSTEM "file://{SECRET_FILE}">'
LAUGHS = '<!ENTITY lol "lol">' + "".join(
    f'<!ENTITY lol{i} "{("&lol;" if i == 1 else f"&lol{i - 1};") * 10}">' for i in range(1, 10)
)


def docx_xxe(folder: Path) -> list[tuple[str, Path]]:
    path = _docx(folder, "xxe.docx", contract_text(31) + "\n\nXXE_MARKER")
    _rewrite(path, "word/document.xml", lambda x: _with_doctype(x, "w:document", XXE, "XXE_MARKER", "&xxe;"))
    return [(path.name, path)]


def docx_laughs(folder: Path) -> list[tuple[str, Path]]:
    path = _docx(folder, "laughs.docx", contract_text(32) + "\n\nLOL_MARKER")
    _rewrite(
        path, "word/document.xml", lambda x: _with_doctype(x, "w:document", LAUGHS, "LOL_MARKER", "&lol9;")
    )
    return [(path.name, path)]


def xlsx_xxe(folder: Path) -> list[tuple[str, Path]]:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Clause", "Text"])
    for n in range(1, 20):
        sheet.append([f"Clause {n}", SENTENCE.format(n=n)])
    sheet.append(["Secret", "XXE_MARKER"])
    path = folder / "xxe.xlsx"
    book.save(str(path))
    _rewrite(path, "xl/sharedStrings.xml", lambda x: _with_doctype(x, "sst", XXE, "XXE_MARKER", "&xxe;"))
    return [(path.name, path)]


def xlsx_wide(folder: Path, rows: int = 2000, columns: int = 100) -> list[tuple[str, Path]]:
    """A sheet of ``rows`` x ``columns`` cells of numbers and words (a large accepted file)."""
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Prices")
    sheet.append([f"Column {c}" for c in range(columns)])
    for r in range(rows):
        sheet.append([f"lot {r}-{c}" if c % 2 else r * c for c in range(columns)])
    path = folder / f"sheet-{rows}x{columns}.xlsx"
    book.save(str(path))
    return [(path.name, path)]


def _png(path: Path, size: tuple[int, int], *, noise: bool) -> Path:
    from PIL import Image, ImageDraw

    if noise:
        image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
        image.save(path, format="PNG", compress_level=1)
        return path
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    for x in range(0, size[0], 500):
        draw.line([(x, 0), (x, size[1])], fill=(20, 20, 20), width=3)
    image.save(path, format="PNG")
    return path


def docx_huge_image(folder: Path) -> list[tuple[str, Path]]:
    """A DOCX with a 12,000 x 12,000 picture: a few MB in the file, 432 MB once decoded."""
    image = _png(folder / "huge-pixels.png", (12_000, 12_000), noise=False)
    return [("huge-image.docx", _docx(folder, "huge-image.docx", contract_text(41), image))]


def docx_big_media(folder: Path) -> list[tuple[str, Path]]:
    """A DOCX of about 95 MB, nearly all of it one picture that does not compress (the largest file taken)."""
    image = _png(folder / "noise.png", (5_600, 5_600), noise=True)
    return [("big-media.docx", _docx(folder, "big-media.docx", contract_text(42), image))]


def pptx_many_slides(folder: Path, slides: int = 5_000) -> list[tuple[str, Path]]:
    """A real presentation of ``slides`` slides (each a part and its relationships: more than 10,000 parts),
    small once unpacked: python-pptx writes one slide, whose parts are then copied ``slides`` times."""
    import pptx

    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Schedule SLIDE_NO"
    slide.placeholders[1].text = SENTENCE.format(n="SLIDE_NO")
    one = folder / "one-slide.pptx"
    presentation.save(str(one))
    with zipfile.ZipFile(one) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    body = parts.pop("ppt/slides/slide1.xml").decode()
    rels = parts.pop("ppt/slides/_rels/slide1.xml.rels")
    types = parts["[Content_Types].xml"].decode()
    override = next(
        chunk for chunk in types.split("<Override ") if 'PartName="/ppt/slides/slide1.xml"' in chunk
    )
    override = "<Override " + override.split("/>")[0] + "/>"
    parts["[Content_Types].xml"] = types.replace(
        override, "".join(override.replace("slide1.xml", f"slide{n}.xml") for n in range(1, slides + 1))
    ).encode()
    presentation_rels = parts["ppt/_rels/presentation.xml.rels"].decode()
    rel = next(r for r in presentation_rels.split("<Relationship ") if 'Target="slides/slide1.xml"' in r)
    rel_id = rel.split('Id="')[1].split('"')[0]
    rel = "<Relationship " + rel.split("/>")[0] + "/>"
    parts["ppt/_rels/presentation.xml.rels"] = presentation_rels.replace(
        rel,
        "".join(
            rel.replace(f'Id="{rel_id}"', f'Id="rIdS{n}"').replace("slide1.xml", f"slide{n}.xml")
            for n in range(1, slides + 1)
        ),
    ).encode()
    main = parts["ppt/presentation.xml"].decode()
    head, _, rest = main.partition("<p:sldIdLst>")
    _, _, tail = rest.partition("</p:sldIdLst>")
    ids = "".join(f'<p:sldId id="{255 + n}" r:id="rIdS{n}"/>' for n in range(1, slides + 1))
    parts["ppt/presentation.xml"] = f"{head}<p:sldIdLst>{ids}</p:sldIdLst>{tail}".encode()
    path = folder / f"slides-{slides}.pptx"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
        for n in range(1, slides + 1):
            archive.writestr(f"ppt/slides/slide{n}.xml", body.replace("SLIDE_NO", str(n)))
            archive.writestr(f"ppt/slides/_rels/slide{n}.xml.rels", rels)
    return [(path.name, path)]


# --------------------------------------------------------------------------- markup and text


def _file(folder: Path, name: str, data: bytes | str) -> list[tuple[str, Path]]:
    path = folder / name.replace("/", "_")
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return [(name, path)]


def svg_xxe(folder: Path) -> list[tuple[str, Path]]:
    svg = (
        f'<?xml version="1.0"?><!DOCTYPE svg [{XXE}]>'
        '<svg xmlns="http://www.w3.org/2000/svg"><text x="0" y="15">&xxe;</text></svg>'
    )
    return _file(folder, "drawing.svg", svg)


def html_xxe(folder: Path) -> list[tuple[str, Path]]:
    html = (
        f'<?xml version="1.0"?><!DOCTYPE html [{XXE}]>'
        f"<html><body><h1>Supply agreement</h1><p>{contract_text(51)}</p><p>&xxe;</p></body></html>"
    )
    return _file(folder, "xxe.html", html)


SCRIPT = "<script>alert('xss')</script>"


def html_scripts(folder: Path) -> list[tuple[str, Path]]:
    html = (
        f"<html><head>{SCRIPT}</head><body onload=\"alert('xss')\"><h1>Services agreement</h1>"
        f"<p>{contract_text(52)}</p><img src=x onerror=\"alert('xss')\">"
        f"<a href=\"javascript:alert('xss')\">terms</a><p>{SCRIPT} in a paragraph</p>"
        '<iframe src="https://example.com/"></iframe></body></html>'
    )
    return _file(folder, "scripts.html", html)


def html_deep(folder: Path, depth: int = 50_000) -> list[tuple[str, Path]]:
    html = "<html><body>" + "<div>" * depth + contract_text(53) + "</div>" * depth + "</body></html>"
    return _file(folder, "deep.html", html)


def hostile_name(folder: Path) -> list[tuple[str, Path]]:
    name = "<img src=x onerror=alert('xss')>\x07\x1b[31m\x00;rm -rf ~;" + SCRIPT + ".txt"
    path = folder / "hostile-name.txt"
    path.write_text(contract_text(54))
    return [(name, path)]


def over_size(folder: Path, limit: int = 100 * MiB) -> list[tuple[str, Path]]:
    path = folder / "big.txt"
    line = (SENTENCE.format(n=1) + "\n").encode()
    with open(path, "wb") as out:
        for _ in range(limit // len(line) + 1):
            out.write(line)
        out.truncate(limit + 7)
    return [(path.name, path)]


def over_chars(folder: Path, chars: int = 31_000_000) -> list[tuple[str, Path]]:
    line = SENTENCE.format(n=7) + "\n"
    return _file(folder, "long.txt", line * (chars // len(line) + 1))


def over_chunks(folder: Path, sections: int = 20_100) -> list[tuple[str, Path]]:
    """About 12 MB of short sections, one chunk each: over 20,000 chunks, under the page and character limits."""
    return _file(folder, "many-sections.md", contract_text(61, sections))


def many_files(folder: Path, count: int = 201) -> list[tuple[str, Path]]:
    out = []
    for i in range(count):
        out += _file(folder, f"lease-{i}.txt", f"Lease {i}: the Tenant pays rent monthly.\n")
    return out


def random_bytes(folder: Path) -> list[tuple[str, Path]]:
    return _file(folder, "notes.txt", random.Random(5).randbytes(200_000))


CASES: list[Case] = [
    Case("control_pdf", "a plain 12-page contract PDF", lambda f: [("msa.pdf", pdf_contract(f))], "ready"),
    Case("pdf_flate_bomb", "PDF page stream inflating to 512 MiB", pdf_flate_bomb, "handled"),
    Case("zip_bomb", "ZIP with a 1 GiB member (1 MB packed)", zip_bomb, "told"),
    Case("zip_nested_bomb", "ZIP of ZIPs of ZIPs, 20 GiB nominal", zip_nested_bomb, "told"),
    Case("zip_escapes", "ZIP with ../, absolute and symlink members", zip_escapes, "handled", "escape"),
    Case("zip_10000_files", "ZIP of 10,000 tiny files", zip_many_files, "refused"),
    Case("docx_xxe", "DOCX whose XML reads /etc/passwd (XXE)", docx_xxe, "handled", "secret"),
    Case("docx_billion_laughs", "DOCX with nested entities (billion laughs)", docx_laughs, "handled"),
    Case("xlsx_xxe", "XLSX shared strings with XXE", xlsx_xxe, "handled", "secret"),
    Case("svg_xxe", "SVG with XXE", svg_xxe, "refused", "secret"),
    Case("html_xxe", "HTML with an XXE doctype", html_xxe, "handled", "secret"),
    Case("html_scripts", "HTML with script, onerror, javascript: links", html_scripts, "handled", "script"),
    Case("html_deep_nesting", "HTML nested 50,000 divs deep", html_deep, "handled"),
    Case(
        "docx_huge_image", "DOCX with a 12,000 x 12,000 picture (432 MB decoded)", docx_huge_image, "handled"
    ),
    Case(
        "docx_95mb_media", "DOCX of 95 MB of incompressible picture", docx_big_media, "handled", quick=False
    ),
    Case("pdf_truncated", "PDF cut at 60% of its bytes", pdf_truncated, "handled"),
    Case("pdf_corrupt", "PDF header then garbage", pdf_corrupt, "told"),
    Case("pdf_encrypted", "password-protected PDF", pdf_encrypted, "told"),
    Case("zero_byte", "empty file", lambda f: _file(f, "empty.pdf", b""), "refused"),
    Case("png_named_pdf", "PNG bytes named .pdf", lambda f: _file(f, "scan.pdf", _png_bytes()), "refused"),
    Case("pdf_named_docx", "PDF bytes named .docx", lambda f: _file(f, "msa.docx", _pdf_bytes(f)), "refused"),
    Case("exe", "a Windows program", lambda f: _file(f, "setup.exe", b"MZ" + b"\0" * 4000), "refused"),
    Case("random_bytes_txt", "200 kB of random bytes named .txt", random_bytes, "told"),
    Case("over_size_100mib_7", "100 MiB + 7 bytes", over_size, "refused"),
    Case("files_201", "201 files in one upload", many_files, "refused"),
    Case(
        "pdf_10050_pages", "PDF of 10,050 pages (limit 10,000)", lambda f: pdf_many_pages(f, 10_050), "told"
    ),
    Case("txt_31m_chars", "31 million characters (limit 30 million)", over_chars, "told"),
    Case("md_20100_chunks", "20,100 sections, one chunk each (limit 20,000)", over_chunks, "told"),
    Case("pptx_5000_slides", "5,000-slide PPTX, over 10,000 parts", pptx_many_slides, "ready"),
    Case("xlsx_200k_cells", "XLSX of 2,000 x 100 cells", xlsx_wide, "handled", quick=False),
    Case(
        "name_control_xss", "file name with control characters and markup", hostile_name, "handled", "script"
    ),
]


def _png_bytes() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (200, 200), (255, 255, 255)).save(out, format="PNG")
    return out.getvalue()


def _pdf_bytes(folder: Path) -> bytes:
    return pdf_contract(folder, "real.pdf", pages=12, seed=902).read_bytes()
