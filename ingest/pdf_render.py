"""Draw a PDF page as a PNG, as a viewer shows it, within a pixel budget; a page with no colour on
it as a grey PNG.

Pure: a pypdfium2 document in, PNG bytes out (no Django). pdfium calls are not thread-safe: callers
hold ``ingest.pdf_pages.PDFIUM_LOCK``.
"""

from __future__ import annotations

import io
import math

import pypdfium2 as pdfium
from PIL import Image, ImageChops

PIXEL_BUDGET = 6_000_000  # pixels of one image at most (a 200 x 200 inch page is drawn smaller)
PNG_COMPRESS_LEVEL = 1  # zlib level: the fastest (docs/decisions.md, ingest.pdf_render.PNG_COMPRESS_LEVEL)


class PageImageError(Exception):
    """The page cannot be drawn (the original is missing or damaged); the message says so to a reader."""


def render_png(pdf: pdfium.PdfDocument, index: int, width: int) -> bytes:
    """Page ``index`` (0-based) as a PNG ``width`` pixels wide, or smaller to stay in ``PIXEL_BUDGET``;
    as a viewer shows it (crop box, /Rotate, annotations and form fields drawn)."""
    try:
        page = pdf[index]
    except (pdfium.PdfiumError, IndexError) as exc:
        raise PageImageError(f"Page {index + 1} of the original cannot be read.") from exc
    try:
        w, h = page.get_size()
        if not (w > 0 and h > 0):
            raise PageImageError(f"Page {index + 1} of the original has no size.")
        scale = min(width / w, math.sqrt(PIXEL_BUDGET / (w * h)))
        image = page.render(scale=scale, may_draw_forms=True).to_pil()
        if _grey(image):  # most contract pages: a grey PNG encodes in a quarter of the time of a colour one
            image = image.convert("L")
    except pdfium.PdfiumError as exc:
        raise PageImageError(f"Page {index + 1} of the original cannot be drawn.") from exc
    finally:
        page.close()
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def _grey(image: Image.Image) -> bool:
    """Whether every pixel of an RGB image is a grey (red = green = blue): nothing is lost in one channel."""
    red, green, blue = image.split()
    return (
        ImageChops.difference(red, green).getbbox() is None
        and ImageChops.difference(red, blue).getbbox() is None
    )
