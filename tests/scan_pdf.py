"""Scanned contracts made in the test: text drawn with the DejaVu font (installed by ``make``) onto a grey
page image with Pillow, turned, skewed or photographed as asked, and wrapped as an image-only PDF (no text
layer), or beside text-layer pages (fpdf2) as a mixed PDF."""

from __future__ import annotations

import io
import random

from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
DPI = 200

CONTRACT_LINES = [
    "SERVICES AGREEMENT",
    "",
    "1. Fees. The Customer shall pay the Supplier a monthly fee of $247.83,",
    "payable within thirty (30) days of the date of each invoice.",
    "",
    "2. Term. This Agreement begins on 1 March 2024 and continues for a",
    "period of two (2) years unless terminated earlier under Section 3.",
    "",
    "3. Termination. Either party may terminate this Agreement on ninety",
    "(90) days written notice to the other party.",
    "",
    "4. Governing Law. This Agreement is governed by the laws of the State",
    "of Delaware, without regard to its conflict of laws rules.",
]
SECOND_PAGE_LINES = [
    "5. Confidentiality. Each party shall keep the other party's",
    "Confidential Information secret and use it only under this Agreement.",
    "",
    "6. Limitation of Liability. Neither party is liable for more than",
    "the fees paid in the twelve (12) months before the claim.",
]


def page_image(
    lines: list[str], *, dpi: int = DPI, size_pt: float = 12
) -> tuple[Image.Image, dict[str, tuple]]:
    """A letter page with ``lines`` drawn on it, and where each word was drawn (its box in pixels)."""
    image = Image.new("L", (int(8.5 * dpi), int(11 * dpi)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, round(size_pt / 72 * dpi))
    where: dict[str, tuple] = {}
    y = dpi
    for line in lines:
        x: float = dpi
        for word in line.split(" "):
            if word:
                draw.text((x, y), word, font=font, fill=0)
                where.setdefault(word, draw.textbbox((x, y), word, font=font))
            x += draw.textlength(word + " ", font=font)
        y += round(size_pt * 1.6 / 72 * dpi)
    return image, where


def turned(image: Image.Image, degrees: float) -> Image.Image:
    """The page turned ``degrees`` counter-clockwise: a quarter turn keeps the whole page, a few degrees (a
    skewed scan) keep its size."""
    if degrees % 90 == 0:
        return image.rotate(degrees, expand=True)
    return image.rotate(degrees, resample=Image.Resampling.BICUBIC, fillcolor=255)


def photographed(image: Image.Image, seed: int = 7) -> Image.Image:
    """The page as a phone photo of it: seen at an angle (a perspective), on a grey desk, blurred, with noise."""
    w, h = image.size
    # corners of the page in the photo, the top edge further away (narrower)
    coefficients = _perspective(
        [(0.18 * w, 0.08 * h), (0.86 * w, 0.02 * h), (0.97 * w, h), (0.0, 0.93 * h)], w, h
    )
    photo = image.transform(
        image.size, Image.Transform.PERSPECTIVE, coefficients, Image.Resampling.BILINEAR, fillcolor=120
    )
    photo = photo.filter(ImageFilter.GaussianBlur(1.2))
    return noisy(photo, 0.04, seed)


def noisy(image: Image.Image, share: float, seed: int = 3) -> Image.Image:
    """``share`` of the pixels set to random greys (scanner dust)."""
    rnd = random.Random(seed)
    out = image.copy()
    pixels = out.load()
    assert pixels is not None
    w, h = out.size
    for _ in range(int(share * w * h)):
        pixels[rnd.randrange(w), rnd.randrange(h)] = rnd.randrange(256)
    return out


def image_pdf(images: list[Image.Image], *, dpi: int = DPI) -> bytes:
    """An image-only PDF: one page per image, the image filling it, no text layer."""
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return buffer.getvalue()


def mixed_pdf() -> bytes:
    """Page 1 and 3 with a text layer (fpdf2), page 2 a scan of :data:`CONTRACT_LINES` (an image only)."""
    from fpdf import FPDF

    scan, _ = page_image(CONTRACT_LINES)
    buffer = io.BytesIO()
    scan.save(buffer, "PNG")
    pdf = FPDF(format="letter")
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, "COVER LETTER. The signed Services Agreement follows as a scanned copy. " * 3)
    pdf.add_page()
    pdf.image(io.BytesIO(buffer.getvalue()), x=0, y=0, w=pdf.w, h=pdf.h)
    pdf.add_page()
    pdf.multi_cell(0, 6, "SCHEDULE A. The Supplier shall deliver the reports each quarter. " * 3)
    return bytes(pdf.output())


def _perspective(corners: list[tuple[float, float]], w: int, h: int) -> list[float]:
    """Pillow's PERSPECTIVE coefficients taking each output pixel to the input: the page's corners
    (top-left, top-right, bottom-right, bottom-left) at ``corners`` of the photo."""
    import numpy as np

    source = [(0, 0), (w, 0), (w, h), (0, h)]
    rows, rhs = [], []
    for (x, y), (u, v) in zip(corners, source):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs += [u, v]
    return [float(c) for c in np.linalg.solve(np.array(rows, dtype=float), np.array(rhs, dtype=float))]
