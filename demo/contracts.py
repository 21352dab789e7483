"""Long commercial contracts rendered to PDF, with the truth of where each planted clause is.

    truth = make_contract_pdf("msa.pdf", pages=200, seed=0)
    truth.by_type("Governing Law")[0].page   # physical page, 1-based

CLI: ``python -m demo.contracts OUT_DIR [--pages N] [--seed S]`` writes one contract and its
truth JSON (with ``--pages``) or the demo set (without).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from demo.clauses import (
    ARTICLES,
    CUSTOMER_ID,
    DEFINITIONS,
    PREAMBLE,
    RECITALS,
    UNIT_FEE,
    ArticleSpec,
    ClausePart,
    ClauseSpec,
    PlantedClause,
    absent_cuad_types,
)
from demo.prose import LegalProse, TitlePool

DEFAULT_PARTIES = ("Northwind Holdings, Inc.", "Brightline Data Services LLC")
FIXED_DATE = datetime(2024, 3, 3, 9, 0, tzinfo=UTC)  # PDF metadata: deterministic bytes
TAIL_PAGES = 3  # signature page, Schedule A (fees), Schedule B (service levels)
MIN_PAGES = 12  # the planted clauses alone need ~8 body pages

FONT = "Helvetica"
BODY_SIZE = 11
LINE_H = 5.6  # mm
PARA_GAP = 2.4  # mm after each paragraph
HEADING_H = LINE_H + 0.6
HEADING_BEFORE = 1.5
HEADING_AFTER = 1.2
MARGIN_X = 25.0
MARGIN_TOP = 24.0
MARGIN_BOTTOM = 22.0


@dataclass(frozen=True)
class ContractTruth:
    path: Path
    title: str
    parties: tuple[str, str]
    roles: tuple[str, str]  # defined terms, e.g. ("Customer", "Provider")
    seed: int
    pages: int
    contract_no: str
    clauses: tuple[PlantedClause, ...]
    absent: tuple[str, ...]  # CUAD categories deliberately absent (answer: not_found)
    signature_page: int
    fee_schedule_page: int  # Schedule A: fee table with UNIT_FEE and CUSTOMER_ID
    words: int = 0
    extra: dict = field(default_factory=dict)

    def by_type(self, clause_type: str) -> list[PlantedClause]:
        return [c for c in self.clauses if c.clause_type == clause_type]

    @property
    def present_types(self) -> list[str]:
        return sorted({c.clause_type for c in self.clauses})

    def to_dict(self) -> dict:
        data = asdict(self)
        data["path"] = str(self.path)
        return data

    def write_json(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        return path


class _ContractPDF(FPDF):
    def __init__(self, header_left: str):
        super().__init__(orientation="P", unit="mm", format="Letter")
        self.header_left = header_left
        self.set_margins(MARGIN_X, MARGIN_TOP, MARGIN_X)
        self.set_auto_page_break(True, margin=MARGIN_BOTTOM)
        self.set_creation_date(FIXED_DATE)
        self.alias_nb_pages()

    def header(self):
        self.set_font(FONT, "", 8)
        self.set_text_color(90)
        self.set_xy(MARGIN_X, 12)
        self.cell(0, 4, self.header_left, align="L")
        self.set_x(MARGIN_X)
        self.cell(0, 4, "CONFIDENTIAL", align="R")
        self.set_draw_color(160)
        self.line(MARGIN_X, 17.5, self.w - MARGIN_X, 17.5)
        self.set_text_color(0)
        self.set_font(FONT, "", BODY_SIZE)
        self.set_y(MARGIN_TOP)

    def footer(self):
        self.set_y(-14)
        self.set_font(FONT, "", 8)
        self.set_text_color(90)
        self.cell(0, 4, f"Page {self.page_no()} of {{nb}}", align="C")
        self.set_text_color(0)


class _Writer:
    """Lays out the contract and records where planted clauses land."""

    def __init__(self, *, title: str, parties, roles, seed: int, numbering: str, contract_no: str):
        self.title = title
        self.seed = seed
        self.numbering = numbering
        self.rng = random.Random(seed)
        self.prose = LegalProse(seed + 1, customer=roles[0], provider=roles[1])
        self.names = {
            "C": roles[0],
            "P": roles[1],
            "c_name": parties[0],
            "p_name": parties[1],
            "title_cased": title.title(),
        }
        self.pdf = _ContractPDF(f"{title.title()} - Contract No. {contract_no}")
        self.pdf.set_title(title.title())
        self.pdf.set_author(parties[1])
        self.pdf.set_subject(f"Contract No. {contract_no}")
        self.planted: list[PlantedClause] = []
        self._widths: dict[str, dict[str, float]] = {}
        self.words = 0
        self.width = self.pdf.w - 2 * MARGIN_X

    # -- geometry ---------------------------------------------------------------------
    def lines_left(self, after_mm: float = 0.0) -> int:
        """Body lines that still fit on this page (after ``after_mm`` of headings)."""
        room = self.pdf.page_break_trigger - self.pdf.get_y() - after_mm
        return max(0, math.floor(room / LINE_H + 1e-6))

    @property
    def page_capacity(self) -> int:
        return math.floor((self.pdf.page_break_trigger - MARGIN_TOP) / LINE_H + 1e-6)

    def line_texts(self, text: str, style: str = "") -> list[str]:
        """Greedy word wrap (fpdf2's own wrapper is quadratic in paragraph length)."""
        self.pdf.set_font(FONT, style, BODY_SIZE)
        measure, cache = self.pdf.get_string_width, self._widths.setdefault(style, {})
        limit = self.width - 2 * self.pdf.c_margin
        space = measure(" ")
        lines = []
        for hard_line in text.split("\n"):
            current: list[str] = []
            used = 0.0
            for word in hard_line.split(" "):
                width = cache.get(word)
                if width is None:
                    width = cache[word] = measure(word)
                if current and used + space + width > limit:
                    lines.append(" ".join(current))
                    current, used = [], 0.0
                used += width + (space if current else 0.0)
                current.append(word)
            lines.append(" ".join(current))
        return lines

    def ensure_lines(self, n: int):
        if self.lines_left() < n:
            self.pdf.add_page()

    # -- primitives -------------------------------------------------------------------
    def para(self, text: str, *, align: str = "L", style: str = ""):
        for line in self.line_texts(text, style):
            self.pdf.cell(self.width, LINE_H, line, align=align, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.pdf.ln(PARA_GAP)
        self.words += len(text.split())

    @staticmethod
    def heading_mm(lines: int = 1) -> float:
        return HEADING_BEFORE + lines * HEADING_H + HEADING_AFTER

    def heading(self, text: str, *, center: bool = False, keep_lines: int = 4, size: float = BODY_SIZE):
        self.ensure_lines(keep_lines)
        self.pdf.ln(HEADING_BEFORE)
        self.pdf.set_font(FONT, "B", size)
        self.pdf.multi_cell(
            self.width, HEADING_H, text, align="C" if center else "L", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )
        self.pdf.ln(HEADING_AFTER)
        self.words += len(text.split())

    def article_heading(self, number: int, title: str) -> None:
        if self.numbering == "decimal":
            self.heading(f"{number}. {title}", keep_lines=6)
        else:
            self.heading(f"ARTICLE {number}\n{title}", center=True, keep_lines=7)

    def article_heading_mm(self) -> float:
        return self.heading_mm(1 if self.numbering == "decimal" else 2)

    def section_label(self, article: int, section: int, title: str) -> str:
        if self.numbering == "decimal":
            return f"{article}.{section} {title}"
        return f"Section {article}.{section} {title}"

    def filler_section(self, article: int, section: int, titles: TitlePool, paras: list[str]):
        self.heading(self.section_label(article, section, titles.next()))
        for text in paras:
            self.para(text)

    # -- planted clauses --------------------------------------------------------------
    def plant(self, spec: ClauseSpec, section: str, *, align: str = "L"):
        text = spec.render(**self.names)
        self.ensure_lines(1)
        lines = self.line_texts(text)
        if " ".join(lines) != text:
            raise AssertionError(f"line split does not rebuild the clause text: {section}")
        parts, page, left, rest = [], self.pdf.page, self.lines_left(), lines
        while rest:
            take, rest = rest[:left], rest[left:]
            parts.append(ClausePart(page, " ".join(take)))
            page, left = page + 1, self.page_capacity
        self.para(text, align=align)
        if self.pdf.page != parts[-1].page:
            raise AssertionError(f"page bookkeeping is off for {section}")
        for clause_type, values in spec.types.items():
            self.planted.append(
                PlantedClause(
                    clause_type=clause_type,
                    label=spec.label or clause_type,
                    section=section,
                    text=text,
                    page=parts[0].page,
                    end_page=parts[-1].page,
                    values=tuple(v.format(**self.names) for v in values),
                    parts=tuple(parts),
                )
            )

    def _steer_across_break(self, text: str, after_mm: float):
        """Add filler paragraphs until, after headings of ``after_mm``, the clause starts with
        3+ lines left on the page but cannot finish on it."""
        need = len(self.line_texts(text))
        for _ in range(100):
            left = self.lines_left(after_mm)
            if 3 <= left <= need - 3:
                return
            if left < 3:
                self.pdf.add_page()
                continue
            self._filler_paragraph(max_lines=min(12, left - need // 2 - 1))
        raise AssertionError("could not steer clause across a page break")

    def _filler_paragraph(self, max_lines: int):
        text = ""
        for _ in range(6):
            candidate = f"{text} {self.prose.sentence()}".strip()
            if len(self.line_texts(candidate)) > max_lines:
                break
            text = candidate
        self.para(text or "The Parties shall cooperate in good faith.")

    # -- document parts ---------------------------------------------------------------
    def front_matter(self, contract_no: str):
        pdf = self.pdf
        pdf.add_page()
        self.heading(self.title.upper(), center=True, size=16)
        self.plant_title()
        pdf.set_font(FONT, "", BODY_SIZE)
        pdf.cell(
            self.width, LINE_H, f"Contract No. {contract_no}", align="C", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )
        pdf.ln(4)
        self.plant(PREAMBLE, "Preamble")
        self.heading("RECITALS", center=True)
        for recital in RECITALS:
            self.para(recital.format(**self.names))

    def plant_title(self):
        title = self.title.upper()
        self.planted.append(
            PlantedClause(
                clause_type="Document Name",
                label="Document Name",
                section="Title",
                text=title,
                page=self.pdf.page,
                end_page=self.pdf.page,
                values=(title,),
                parts=(ClausePart(self.pdf.page, title),),
            )
        )

    def definitions(self, number: int):
        self.article_heading(number, ARTICLES[0].title)
        self.heading(self.section_label(number, 1, "Definitions"))
        self.para("In this Agreement, the following capitalised terms have the meanings set out below:")
        for term, meaning in DEFINITIONS:
            self.para(f'"{term.format(**self.names)}" {meaning.format(**self.names)}')
        self.heading(self.section_label(number, 2, "Interpretation"))
        self.para(
            "Headings are for convenience only and do not affect interpretation. Words in the "
            'singular include the plural and vice versa. The words "include" and "including" '
            "are to be construed without limitation."
        )

    def body(self, body_last_page: int):
        """Articles 2.. spread over the pages by weight, ending exactly on ``body_last_page``."""
        articles = ARTICLES[1:]
        total = sum(a.weight for a in articles)
        first_page = self.pdf.page
        span = max(0, body_last_page - first_page)
        self.body_end_mm = body_last_page * self.usable_mm
        needs = [self.article_mm(a) for a in articles]
        cumulative = 0.0
        for i, article in enumerate(articles):
            cumulative += article.weight
            target = min(body_last_page, first_page + round(span * cumulative / total))
            self.article(i + 2, article, target, reserve_mm=sum(needs[i + 1 :]))
        if self.pdf.page > body_last_page:
            raise ValueError(f"contract needs more pages: body ran to page {self.pdf.page}")
        if self.lines_left() >= 1:
            self.para("[Signature page follows.]", align="C")

    # -- space budgeting (keeps the planted clauses inside the body for small page counts) --
    @property
    def usable_mm(self) -> float:
        return self.pdf.page_break_trigger - MARGIN_TOP

    def position_mm(self) -> float:
        return (self.pdf.page - 1) * self.usable_mm + (self.pdf.get_y() - MARGIN_TOP)

    def paras_mm(self, paras) -> float:
        return sum(len(self.line_texts(p)) * LINE_H + PARA_GAP for p in paras)

    def article_mm(self, spec: ArticleSpec) -> float:
        return self.article_heading_mm() + sum(self.clause_mm(c) for c in spec.clauses)

    def clause_mm(self, spec: ClauseSpec) -> float:
        return self.heading_mm() + self.paras_mm([spec.render(**self.names)])

    def affordable(self, paras, reserve_mm: float) -> bool:
        """Can a filler section of ``paras`` go here and still leave room for ``reserve_mm``?"""
        slack = 0.15 * reserve_mm + 8 * LINE_H  # keep-with-next and steering waste
        need = self.heading_mm() + self.paras_mm(paras) + reserve_mm + slack
        return self.position_mm() + need <= self.body_end_mm

    # -- articles ---------------------------------------------------------------------
    def article(self, number: int, spec: ArticleSpec, end_page: int, reserve_mm: float):
        """Heading, optional lead filler, planted clauses, then filler up to ``end_page``.

        ``reserve_mm`` is the room the later articles' planted clauses need."""
        titles = TitlePool(self.rng, spec.topic) if spec.topic else None
        own_mm = sum(self.clause_mm(c) for c in spec.clauses)
        lead = [self.prose.section() for _ in range(self.rng.randint(0, 2))] if titles and spec.lead else []
        if self.pdf.page >= end_page or not self.affordable(
            [p for sec in lead for p in sec], reserve_mm + own_mm
        ):
            lead = []
        if not lead and spec.clauses and spec.clauses[0].span_page_break:
            # the spanning clause comes right after the article heading: steer before both
            self._steer_across_break(
                spec.clauses[0].render(**self.names), self.article_heading_mm() + self.heading_mm()
            )
        self.article_heading(number, spec.title)
        section = 0
        for paras in lead:
            section += 1
            assert titles is not None  # a lead is drawn only with titles
            self.filler_section(number, section, titles, paras)
        for clause in spec.clauses:
            section += 1
            label = self.section_label(number, section, clause.heading.format(**self.names))
            if clause.span_page_break and section > 1:
                self._steer_across_break(clause.render(**self.names), self.heading_mm())
            self.heading(label)
            self.plant(clause, label)
            if clause.span_page_break and not self.planted[-1].spans_pages:
                raise AssertionError(f"{label} was meant to span a page break")
        while titles and self._before_end(end_page):
            paras = self.prose.section()
            for _ in range(3):  # near the end of the body, try shorter sections
                if self.affordable(paras, reserve_mm):
                    break
                paras = self.prose.section(max_paragraphs=1)
            else:
                break
            section += 1
            self.filler_section(number, section, titles, paras)

    def _before_end(self, end_page: int) -> bool:
        """True while a (sub-page) filler section would still end on or before ``end_page``."""
        if self.pdf.page < end_page:
            return True
        return self.pdf.page == end_page and self.lines_left() > self.page_capacity * 0.9

    def signature_page(self) -> int:
        pdf = self.pdf
        pdf.add_page()
        self.heading("SIGNATURES", center=True)
        self.para(
            "IN WITNESS WHEREOF, the Parties have caused this Agreement to be executed by their duly "
            "authorised representatives as of the date first written above."
        )
        for name, role in ((self.names["c_name"], self.names["C"]), (self.names["p_name"], self.names["P"])):
            pdf.ln(6)
            self.para(f'{name.upper()} ("{role}")', align="L", style="B")
            for label in ("By:", "Name:", "Title:", "Date:"):
                self.para(f"{label} ______________________________", align="L")
        return pdf.page

    def fee_schedule(self) -> int:
        pdf = self.pdf
        pdf.add_page()
        self.heading("SCHEDULE A\nFEE SCHEDULE", center=True)
        self.para(
            f"All fees are stated in United States dollars. {self.names['C']} account identifier: "
            f"{CUSTOMER_ID}."
        )
        rows = (
            ("Fee Item", "Unit", "Fee (USD)"),
            ("Standard Processed Unit", "per Processed Unit", UNIT_FEE),
            ("Expedited Processed Unit", "per Processed Unit", "$312.40"),
            ("Onboarding of a new Service Location", "per Service Location", "$18,500.00"),
            ("Additional report (ad hoc)", "per report", "$1,275.00"),
            (f"{self.names['P']} Personnel, senior consultant", "per day", "$1,640.00"),
            (f"{self.names['P']} Personnel, analyst", "per day", "$980.00"),
        )
        self._table(rows, widths=(70, 50, 30))
        self.para(f"Invoices are payable net 30 and shall quote account identifier {CUSTOMER_ID}.", align="L")
        return pdf.page

    def service_level_schedule(self):
        self.pdf.add_page()
        self.heading("SCHEDULE B\nSERVICE LEVELS", center=True)
        rows = (
            ("Service Level", "Target", "Measurement Period"),
            ("Availability of the Services", "99.9%", "Calendar month"),
            ("Severity 1 Incident response", "30 minutes", "Calendar month"),
            ("Severity 2 Incident response", "2 hours", "Calendar month"),
            ("Processed Unit accuracy", "99.5%", "Calendar month"),
            ("Monthly performance report", "5th Business Day", "Calendar month"),
        )
        self._table(rows, widths=(75, 40, 35))
        self.para(self.prose.paragraph())

    def _table(self, rows, widths):
        pdf = self.pdf
        pdf.set_font(FONT, "", 9.5)
        with pdf.table(
            col_widths=widths, text_align=("LEFT", "LEFT", "RIGHT"), line_height=6, first_row_as_headings=True
        ) as table:
            for row in rows:
                cells = table.row()
                for value in row:
                    cells.cell(value)
        pdf.ln(3)
        self.words += sum(len(v.split()) for row in rows for v in row)


def make_contract_pdf(
    path: str | Path,
    *,
    pages: int = 200,
    seed: int = 0,
    title: str = "Master Services Agreement",
    parties: tuple[str, str] = DEFAULT_PARTIES,
    roles: tuple[str, str] = ("Customer", "Provider"),
    numbering: str = "article",
) -> ContractTruth:
    """Write a ``pages``-page contract PDF to ``path`` and return where its clauses are.

    ``numbering`` is ``"article"`` ("ARTICLE 5 / Section 5.2") or ``"decimal"`` ("5. TITLE / 5.2").
    Same arguments, same bytes.
    """
    if numbering not in ("article", "decimal"):
        raise ValueError("numbering must be 'article' or 'decimal'")
    if pages < MIN_PAGES:
        raise ValueError(f"pages must be >= {MIN_PAGES}")
    path = Path(path)
    initials = "".join(word[0] for word in title.split() if word[0].isalpha()).upper()
    contract_no = f"{initials}-2024-{1000 + seed % 9000:04d}"
    w = _Writer(
        title=title,
        parties=tuple(parties),
        roles=tuple(roles),
        seed=seed,
        numbering=numbering,
        contract_no=contract_no,
    )
    w.front_matter(contract_no)
    w.definitions(1)
    w.body(body_last_page=pages - TAIL_PAGES)
    signature_page = w.signature_page()
    fee_page = w.fee_schedule()
    w.service_level_schedule()
    if w.pdf.page != pages:
        raise ValueError(f"layout produced {w.pdf.page} pages, wanted {pages}")
    path.parent.mkdir(parents=True, exist_ok=True)
    w.pdf.output(str(path))
    return ContractTruth(
        path=path,
        title=title,
        parties=(*parties,),
        roles=(*roles,),
        seed=seed,
        pages=pages,
        contract_no=contract_no,
        clauses=tuple(w.planted),
        absent=absent_cuad_types(),
        signature_page=signature_page,
        fee_schedule_page=fee_page,
        words=w.words,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.contracts", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--pages", type=int, help="write one contract of N pages (+ its truth JSON)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.pages:
        pdf = args.out_dir / f"msa-{args.pages}p-seed{args.seed}.pdf"
        truth = make_contract_pdf(pdf, pages=args.pages, seed=args.seed)
        truth.write_json(pdf.with_suffix(".truth.json"))
        print(pdf)
        return 0
    from demo.demo_set import write_demo_set

    for written in write_demo_set(args.out_dir):
        print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
