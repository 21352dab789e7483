"""OCR of the PDF pages that have no usable text layer (scans, faxes, a layer of junk glyphs), with
Tesseract in process (``tesserocr``, whose wheel carries libtesseract 5.5), reading the language data of
Debian's ``tesseract-ocr`` packages (installed by ``make ocr``).

Per page: the page is drawn as a viewer shows it (pypdfium2, grey, at its scan's resolution within
:data:`MIN_OCR_DPI` and :data:`OCR_DPI`, and within :data:`PIXEL_BUDGET` pixels: a poster-sized or 600 dpi
page costs no more than a letter page at 300 dpi), cleared of specks when it has many (a 3 x 3 median,
:func:`speckled`), straightened when its lines are skewed by more than :data:`MIN_SKEW_DEGREES` (a
projection profile, :func:`skew_angle`: Tesseract's own line finding copes with less, not with a few
degrees), and read with Tesseract's automatic page segmentation (``--psm 3``) as TSV (each word with its
box and its confidence). A page read poorly (mean word confidence under :data:`RETRY_CONFIDENCE`:
sideways or upside down) is read again with orientation detection (``--psm 1``), and the better reading
kept; Tesseract turns a quarter-turned page itself and gives its boxes on the page as drawn.

The words become the page's text exactly as a text layer's lines do: words of a line joined by a
space, lines by a newline, paragraphs and blocks by a blank line, each word cleaned as the text
layer is (``ingest.pdf_pages.clean_word``). Each word keeps where it is in that text and its box,
as fractions of the page as shown (``ingest.pdf_boxes`` draws a cited span's boxes from them).
The page's confidence is the mean of its words' confidences (0-100; 0 when no word was read).

Pages are drawn one at a time in the calling thread (pdfium is not thread-safe); up to ``workers``
threads read them meanwhile, each with a Tesseract of its own (one core each: Tesseract lets go of
Python's lock while it reads, and this build has no OpenMP threads of its own). At most ``workers``
drawn pages are held at once, so memory is bounded whatever the page count. An exception in the
caller's thread (Celery's soft time limit, a deleted document) goes on at once; no page is started
after it, and a page being read ends within its ``page_timeout``.

Pure: no Django. Raises :class:`ingest.convert_errors.ConversionError`: ``needs_ocr`` (no Tesseract
language data on this server), ``ocr_language`` (a language asked for is not installed), ``ocr_failed``
(Tesseract failed on a page, or took longer than ``page_timeout``).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import tesserocr
from PIL import Image, ImageFilter

from ingest.convert_errors import ConversionError

# A page is drawn at its scan's own resolution (its sharpest image's dpi) within these, a page without an
# image at OCR_DPI: a 200 dpi scan read at 200 loses small type, at 250 reads as well as at 300 in 13% less
# time (docs/decisions.md, ingest.ocr.OCR_DPI and MIN_OCR_DPI).
OCR_DPI = 300
MIN_OCR_DPI = 250
PIXEL_BUDGET = 10_000_000  # pixels of one drawn page at most: a legal page at 300 dpi, 10 MB grey
RETRY_CONFIDENCE = 60.0  # a first reading under this mean confidence is read again with orientation detection
LOW_CONFIDENCE = 85.0  # a page under this mean confidence is flagged to the reviewer (docs/decisions.md)
MAX_SKEW_DEGREES = 8.0  # the skew looked for, either way
MIN_SKEW_DEGREES = 0.3  # a smaller skew is left to Tesseract's own line finding
DARK = 96  # a grey darker than this is ink when the skew is measured (a photo's grey desk is not)
SPECKLED = 0.0015  # a page with more isolated specks than this share of its pixels is despeckled first
PAGE_TIMEOUT_S = 180  # one page's Tesseract reading at most
MAX_WORDS_PER_PAGE = 20_000  # word boxes kept per page (a dense page has ~700)
# Where Debian's tesseract-ocr-<lang> packages put their data (bookworm: 5; bullseye: 4.00), then the
# usual places of other systems; ``TESSDATA_PREFIX`` or ``OcrOptions.tessdata`` comes first.
TESSDATA_DIRS = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
)

Word = tuple[int, int, float, float, float, float]  # start, end (in the page text), left, top, right, bottom


@dataclass(frozen=True)
class OcrOptions:
    """How pages are read: languages as Tesseract names them, joined by "+" ("eng", "eng+deu")."""

    languages: str = "eng"
    workers: int = 0  # pages read at once (threads, each with a Tesseract); 0: the cores this process may use
    dpi: int = OCR_DPI  # the most a page is drawn at
    min_dpi: int = MIN_OCR_DPI  # the least (a scan of a lower resolution is drawn larger)
    pixel_budget: int = PIXEL_BUDGET
    page_timeout: float = PAGE_TIMEOUT_S
    tessdata: str = ""  # the folder of the languages' .traineddata files; "": found (``tessdata_dir``)

    def pool_size(self) -> int:
        if self.workers > 0:
            return self.workers
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not Linux
            return max(1, os.cpu_count() or 1)


@dataclass
class OcrPage:
    """One page as OCR read it."""

    text: str
    confidence: float  # mean word confidence, 0-100 (0: no word read)
    words: list[Word] = field(default_factory=list)
    skew: float = 0.0  # degrees the drawn page was turned back before reading
    oriented: bool = False  # read again with orientation detection (``--psm 1``), and that reading kept

    @property
    def low(self) -> bool:
        return self.confidence < LOW_CONFIDENCE


# --------------------------------------------------------------------------- Tesseract at hand


def check_ready(options: OcrOptions) -> Path:
    """The folder of Tesseract's data; :class:`ConversionError` unless it holds every language of
    ``options``."""
    folder = tessdata_dir(options.tessdata)
    if folder is None:
        raise ConversionError(
            "needs_ocr",
            "This PDF has scanned pages without a text layer, and OCR (Tesseract) is not installed on this "
            "server. Install it (make ocr) and upload the file again.",
        )
    installed = languages_in(folder)
    wanted = [lang for lang in options.languages.split("+") if lang]
    missing = [lang for lang in wanted if lang not in installed]
    if missing or not wanted:
        have = ", ".join(sorted(installed - {"osd"})) or "none"
        raise ConversionError(
            "ocr_language",
            f"This PDF has scanned pages, and the OCR language {'+'.join(missing) or '(none)'} set in "
            f"OCR_LANGUAGES ({options.languages or 'empty'}) is not installed on this server (installed: "
            f"{have}). Install its tesseract-ocr-<language> package or change OCR_LANGUAGES, then upload "
            "the file again.",
        )
    return folder


def tessdata_dir(configured: str = "") -> Path | None:
    """The folder Tesseract reads its languages from: ``configured`` when given, else ``TESSDATA_PREFIX``
    or the first of :data:`TESSDATA_DIRS` that holds a language; None when there is none."""
    candidates = [configured] if configured else [os.environ.get("TESSDATA_PREFIX", ""), *TESSDATA_DIRS]
    for candidate in candidates:
        folder = Path(candidate) if candidate else None
        if folder is not None and folder.is_dir() and any(folder.glob("*.traineddata")):
            return folder
    return None


def languages_in(folder: Path) -> frozenset[str]:
    """The languages Tesseract has data for in ``folder`` (``eng``, ``osd``, ...)."""
    return frozenset(p.stem for p in folder.glob("*.traineddata"))


# --------------------------------------------------------------------------- reading pages


# (pages read so far, pages to read), called in the caller's thread: once with 0 before the first page is
# read, then after each page
PageDone = Callable[[int, int], None]


def read_pages(
    pdf: pdfium.PdfDocument,
    indexes: Sequence[int],
    options: OcrOptions,
    *,
    on_page: PageDone | None = None,
    load: Callable[[pdfium.PdfDocument, int], pdfium.PdfPage] | None = None,
) -> dict[int, OcrPage]:
    """Read the pages ``indexes`` (0-based) of ``pdf``; returns each page's reading by its index.

    ``load`` loads a page (default ``pdf[index]``; the converter passes the one that draws form fields).
    """
    if not indexes:
        return {}
    runner = _Runner(options, check_ready(options))
    results: dict[int, OcrPage] = {}
    pending: dict[Future, int] = {}
    todo = list(indexes)
    pool = ThreadPoolExecutor(max_workers=options.pool_size(), thread_name_prefix="ocr")
    if on_page:
        on_page(0, len(indexes))
    try:
        while todo or pending:
            while todo and len(pending) < options.pool_size():
                index = todo.pop(0)
                image = draw_page(pdf, index, options, load=load)
                pending[pool.submit(runner.read, image, index)] = index
            finished, _ = wait(list(pending), timeout=1.0, return_when=FIRST_COMPLETED)
            for future in finished:
                index = pending.pop(future)
                results[index] = future.result()  # raises the page's ConversionError
                if on_page:
                    on_page(len(results), len(indexes))
    finally:
        runner.stop()
        pool.shutdown(wait=False, cancel_futures=True)
    return results


def draw_page(
    pdf: pdfium.PdfDocument,
    index: int,
    options: OcrOptions,
    *,
    load: Callable[[pdfium.PdfDocument, int], pdfium.PdfPage] | None = None,
) -> Image.Image:
    """Page ``index`` drawn grey as a viewer shows it, at its scan's resolution (within ``options.min_dpi``
    and ``options.dpi``) and the pixel budget."""
    try:
        page = load(pdf, index) if load else pdf[index]
    except pdfium.PdfiumError as exc:
        raise ConversionError(
            "corrupt", f"Page {index + 1} of this PDF is damaged and cannot be read."
        ) from exc
    try:
        width, height = page.get_size()
        if not (width > 0 and height > 0):
            raise ConversionError("corrupt", f"Page {index + 1} of this PDF has no size.")
        scale = min(_reading_dpi(page, options) / 72, _budget_scale(width, height, options.pixel_budget))
        image = page.render(scale=scale, grayscale=True, may_draw_forms=True).to_pil().convert("L")
        image.info["dpi"] = (scale * 72, scale * 72)  # what Tesseract is told (--dpi)
        return image
    except pdfium.PdfiumError as exc:
        raise ConversionError("corrupt", f"Page {index + 1} of this PDF cannot be drawn.") from exc
    finally:
        page.close()


def _reading_dpi(page: pdfium.PdfPage, options: OcrOptions) -> float:
    """The resolution of the page's sharpest image, within ``options.min_dpi`` and ``options.dpi``;
    ``options.dpi`` for a page with no image (junk text drawn as type)."""
    found = 0.0
    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
        try:
            meta = image.get_metadata()
        except pdfium.PdfiumError:
            continue
        found = max(found, min(meta.horizontal_dpi, meta.vertical_dpi))
    if found <= 0:
        return options.dpi
    return min(max(found, options.min_dpi), options.dpi)


def _budget_scale(width: float, height: float, budget: int) -> float:
    """The largest scale at which a ``width`` x ``height`` point page, its sides rounded up to whole pixels,
    has at most ``budget`` pixels: (w s + 1)(h s + 1) = budget, solved for s."""
    area, sides = width * height, width + height
    return (-sides + math.sqrt(sides * sides + 4 * area * (budget - 1))) / (2 * area)


class _Runner:
    """Reads drawn pages from the pool's threads, each thread with a Tesseract of its own; after
    :meth:`stop` no page is started."""

    def __init__(self, options: OcrOptions, tessdata: Path):
        self.options = options
        self.tessdata = str(tessdata)
        self.languages = "+".join(lang for lang in options.languages.split("+") if lang)
        self._local = threading.local()
        self._stopped = False

    def read(self, image: Image.Image, index: int) -> OcrPage:
        """One page: straightened, read, and read again with orientation detection when poor."""
        dpi = _dpi_of(image, self.options)  # noted on the drawn image, before it is filtered or turned
        if speckled(image) > SPECKLED:
            image = image.filter(ImageFilter.MedianFilter(3))
        angle = skew_angle(image)
        if angle:
            image = image.rotate(-angle, resample=Image.Resampling.BILINEAR, fillcolor=255)
        size = image.size
        page = parse_tsv(self._tesseract(image, tesserocr.PSM.AUTO, dpi, index), size, angle)
        if page.confidence < RETRY_CONFIDENCE:
            turned = parse_tsv(self._tesseract(image, tesserocr.PSM.AUTO_OSD, dpi, index), size, angle)
            if turned.confidence > page.confidence:
                turned.oriented = True
                page = turned
        return page

    def _api(self) -> tesserocr.PyTessBaseAPI:
        api = getattr(self._local, "api", None)
        if api is None:
            try:
                api = tesserocr.PyTessBaseAPI(path=self.tessdata, lang=self.languages)
            except RuntimeError as exc:
                raise ConversionError(
                    "ocr_failed", f"OCR could not start: Tesseract could not load {self.languages} ({exc})."
                ) from exc
            self._local.api = api  # ends with its thread: the pool's threads end with ``read_pages``
        return api

    def _tesseract(self, image: Image.Image, psm: int, dpi: int, index: int) -> str:
        if self._stopped:
            raise ConversionError("ocr_failed", "OCR was stopped.")
        api = self._api()
        api.SetPageSegMode(psm)
        api.SetImage(image)
        api.SetSourceResolution(dpi)
        if not api.Recognize(max(1, round(self.options.page_timeout * 1000))):  # milliseconds
            api.Clear()
            raise ConversionError(
                "ocr_failed",
                f"OCR of page {index + 1} took longer than {self.options.page_timeout:g} seconds, so this "
                "scan was not read. Upload a clearer or smaller scan of it.",
            )
        tsv = api.GetTSVText(0)
        api.Clear()  # the page image and its reading go now, not with the next page
        return tsv

    def stop(self) -> None:
        self._stopped = True


def _dpi_of(image: Image.Image, options: OcrOptions) -> int:
    """The resolution the page was drawn at (:func:`draw_page` notes it on the image)."""
    return max(1, round(image.info.get("dpi", (options.dpi, options.dpi))[0]))


# --------------------------------------------------------------------------- specks and skew


def speckled(image: Image.Image) -> float:
    """The share of specks (scanner dust, noise) in a 1,000-pixel square at the page's centre: pixels darker,
    or lighter, by more than 64 levels than every pixel of the ring two pixels around them, so a speck drawn
    a little larger than one pixel (a scan drawn at a higher resolution) counts too. A pixel of a stroke of
    type is never that (the stroke goes on through the ring), so small type is not taken for noise."""
    w, h = image.size
    side = min(1000, w, h)
    if side < 5:
        return 0.0
    left, top = (w - side) // 2, (h - side) // 2
    a = np.asarray(image.crop((left, top, left + side, top + side)), dtype=np.int16)
    centre = a[2:-2, 2:-2]
    ring = [
        a[2 + dy : a.shape[0] - 2 + dy, 2 + dx : a.shape[1] - 2 + dx]
        for dy in range(-2, 3)
        for dx in range(-2, 3)
        if max(abs(dy), abs(dx)) == 2
    ]
    low, high = np.minimum.reduce(ring), np.maximum.reduce(ring)
    specks = np.count_nonzero(centre < low - 64) + np.count_nonzero(centre > high + 64)
    return specks / centre.size


def skew_angle(image: Image.Image) -> float:
    """The angle (degrees, counter-clockwise) the page's text lines rise by, 0 when under
    :data:`MIN_SKEW_DEGREES` or not clear. Projection profile on a reduced copy: the dark pixels' rows,
    sheared by each candidate angle, are counted; level lines give the sharpest profile (largest sum of
    squares). Coarse steps of 0.5 degree, then 0.1 around the best."""
    small = image.copy()
    small.thumbnail((1200, 1200))
    dark = np.asarray(small) < DARK
    rows_at, cols_at = np.nonzero(dark)
    if len(rows_at) < 2000:
        return 0.0
    xs = cols_at.astype(np.float64) - small.width / 2
    ys = rows_at.astype(np.float64)

    def sharpness(degrees: float) -> float:
        rows = np.round(ys + xs * math.tan(math.radians(degrees))).astype(np.int64)
        counts = np.bincount(rows - rows.min())
        return float(np.dot(counts, counts))

    coarse = max(np.arange(-MAX_SKEW_DEGREES, MAX_SKEW_DEGREES + 0.01, 0.5), key=sharpness)
    best = max(np.arange(coarse - 0.4, coarse + 0.41, 0.1), key=sharpness)
    if abs(best) < MIN_SKEW_DEGREES or sharpness(best) < 1.05 * sharpness(0.0):
        return 0.0
    return round(float(best), 2)


# --------------------------------------------------------------------------- Tesseract's TSV


def parse_tsv(tsv: str, size: tuple[int, int], skew: float = 0.0) -> OcrPage:
    """The page text, mean confidence and word boxes from Tesseract's TSV of an image of ``size``
    (width, height) pixels; ``skew``: the degrees the image was turned back before reading (the boxes
    are turned with the page again, so they sit on the page as drawn)."""
    from ingest.pdf_pages import clean_word

    width, height = size
    pieces: list[str] = []
    words: list[Word] = []
    confidences: list[float] = []
    length = 0
    last: tuple[str, str, str] | None = None  # block, paragraph, line of the word before
    for row in tsv.splitlines():  # a header row, where there is one, is not a word (level 5)
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        text = clean_word("\t".join(cols[11:]))
        if not text:
            continue
        try:
            left, top, w, h = (int(v) for v in cols[6:10])
            confidence = float(cols[10])
        except ValueError:
            continue
        where = (cols[2], cols[3], cols[4])
        if last is not None:
            sep = "\n\n" if where[:2] != last[:2] else "\n" if where != last else " "
            pieces.append(sep)
            length += len(sep)
        last = where
        pieces.append(text)
        if confidence >= 0:
            confidences.append(confidence)
        if len(words) < MAX_WORDS_PER_PAGE:
            box = _turned_back((left, top, left + w, top + h), size, skew)
            left_f, top_f, right_f, bottom_f = (round(v, 5) for v in _fractions(box, width, height))
            words.append((length, length + len(text), left_f, top_f, right_f, bottom_f))
        length += len(text)
    confidence = sum(confidences) / len(confidences) if confidences else 0.0
    return OcrPage("".join(pieces), round(confidence, 2), words, skew)


def _turned_back(
    box: tuple[float, float, float, float], size: tuple[int, int], skew: float
) -> tuple[float, float, float, float]:
    """A box on the straightened image, on the page as drawn: its corners turned by ``skew`` degrees
    (counter-clockwise) about the centre, the box around them."""
    if not skew:
        return box
    cx, cy = size[0] / 2, size[1] / 2
    c, s = math.cos(math.radians(skew)), math.sin(math.radians(skew))
    xs, ys = [], []
    for x, y in ((box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])):
        dx, dy = x - cx, y - cy
        xs.append(cx + dx * c + dy * s)
        ys.append(cy - dx * s + dy * c)
    return min(xs), min(ys), max(xs), max(ys)


def _fractions(
    box: tuple[float, float, float, float], width: int, height: int
) -> tuple[float, float, float, float]:
    left, top, right, bottom = box
    return (
        min(max(left / width, 0.0), 1.0),
        min(max(top / height, 0.0), 1.0),
        min(max(right / width, 0.0), 1.0),
        min(max(bottom / height, 0.0), 1.0),
    )
