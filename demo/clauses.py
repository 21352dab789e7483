"""Planted clauses: the known answers hidden in the generated contracts.

Every planted clause is a single paragraph whose exact text, values and page are recorded in
the truth object. Clause types use CUAD category names exactly, plus the seed types
(``indemnification``, ``payment``, ``termination``, ``ip``, ``other``). Key values are fixed
constants so that tests, demos and benchmarks can look them up by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# CUAD v1's 41 categories, exact names (as in ../shared/eval/cuad-dev/gold.jsonl).
CUAD_CATEGORIES = (
    "Affiliate License-Licensee",
    "Affiliate License-Licensor",
    "Agreement Date",
    "Anti-Assignment",
    "Audit Rights",
    "Cap On Liability",
    "Change Of Control",
    "Competitive Restriction Exception",
    "Covenant Not To Sue",
    "Document Name",
    "Effective Date",
    "Exclusivity",
    "Expiration Date",
    "Governing Law",
    "Insurance",
    "Ip Ownership Assignment",
    "Irrevocable Or Perpetual License",
    "Joint Ip Ownership",
    "License Grant",
    "Liquidated Damages",
    "Minimum Commitment",
    "Most Favored Nation",
    "No-Solicit Of Customers",
    "No-Solicit Of Employees",
    "Non-Compete",
    "Non-Disparagement",
    "Non-Transferable License",
    "Notice Period To Terminate Renewal",
    "Parties",
    "Post-Termination Services",
    "Price Restrictions",
    "Renewal Term",
    "Revenue/Profit Sharing",
    "Rofr/Rofo/Rofn",
    "Source Code Escrow",
    "Termination For Convenience",
    "Third Party Beneficiary",
    "Uncapped Liability",
    "Unlimited/All-You-Can-Eat-License",
    "Volume Restriction",
    "Warranty Duration",
)
SEED_TYPES = ("indemnification", "termination", "payment", "ip", "other")

# Exact values planted in the contracts (verbatim in the text).
AGREEMENT_DATE = "March 3, 2024"
EFFECTIVE_DATE = "April 1, 2024"
EXPIRATION_DATE = "March 31, 2027"
RENEWAL_TERM = "twelve (12) months"
NON_RENEWAL_NOTICE = "ninety (90) days"
UNIT_FEE = "$247.83"
CUSTOMER_ID = "cust_4711"
PAYMENT_TERMS = "net 30"
AUDIT_NOTICE = "fifteen (15) Business Days"
WARRANTY_PERIOD = "one hundred eighty (180) days"
CAP_AMOUNT = "$247,830.00"
INSURANCE_LIMIT = "$5,000,000"
CURE_PERIOD = "thirty (30) days"
CONVENIENCE_NOTICE = "forty-five (45) days"
NON_COMPETE_PERIOD = "eighteen (18) months"
CONTROL_THRESHOLD = "fifty percent (50%)"
GOVERNING_LAW = "State of Delaware"
CONFIDENTIALITY_SURVIVAL = "five (5) years"


@dataclass(frozen=True)
class ClausePart:
    """The piece of a clause printed on one physical page."""

    page: int
    text: str


@dataclass(frozen=True)
class PlantedClause:
    clause_type: str  # CUAD category name or seed type
    label: str  # human name, e.g. "Confidentiality"
    section: str  # heading it sits under, e.g. "Section 12.1 Cap on Liability"
    text: str  # exact paragraph text
    page: int  # 1-based physical page where the text starts
    end_page: int  # physical page where it ends
    values: tuple[str, ...] = ()  # exact values, each a substring of ``text``
    parts: tuple[ClausePart, ...] = ()  # text split by page (one part unless it spans)

    @property
    def spans_pages(self) -> bool:
        return self.end_page > self.page


@dataclass(frozen=True)
class ClauseSpec:
    """A clause to plant: one paragraph under its own section heading."""

    heading: str
    template: str  # {C}/{P} role names, {c_name}/{p_name} party names
    types: dict[str, tuple[str, ...]]  # clause type -> exact values
    label: str = ""
    span_page_break: bool = False  # force this paragraph across a page break

    def render(self, **names: str) -> str:
        return self.template.format(**names)


@dataclass(frozen=True)
class ArticleSpec:
    title: str  # upper case, e.g. "INDEMNIFICATION"
    topic: str | None  # filler topic (demo.prose.AREAS) or None
    weight: float  # share of the body's pages
    clauses: tuple[ClauseSpec, ...] = field(default_factory=tuple)
    lead: bool = True  # allow filler sections before the planted ones


PREAMBLE = ClauseSpec(
    heading="",
    label="Parties and Agreement Date",
    template=(
        'This {title_cased} (this "Agreement") is entered into on ' + AGREEMENT_DATE + " by and between "
        "{c_name}, an Illinois corporation with offices at 1200 Harbor Avenue, Chicago, Illinois 60601 "
        '("{C}"), and {p_name}, a Colorado limited liability company with offices at 455 Larimer Street, '
        'Denver, Colorado 80202 ("{P}") (each a "Party" and together the "Parties").'
    ),
    types={"Parties": ("{c_name}", "{p_name}"), "Agreement Date": (AGREEMENT_DATE,)},
)

RECITALS = (
    "WHEREAS, {C} wishes to obtain certain data processing, reporting and related services for its business;",
    "WHEREAS, {P} has the experience, personnel and facilities required to provide such services; and",
    "WHEREAS, the Parties wish to set out the terms on which {P} will provide such services to {C}.",
    "NOW, THEREFORE, in consideration of the mutual covenants set out below, and for other good and "
    "valuable consideration, the receipt and sufficiency of which are acknowledged, the Parties agree "
    "as follows:",
)

DEFINITIONS = (
    (
        "Business Day",
        "means any day other than a Saturday, a Sunday or a public holiday in New York, New York.",
    ),
    (
        "Change Order",
        "means a written document signed by both Parties that records an agreed change to the Services.",
    ),
    (
        "Confidential Information",
        "means all information disclosed by or on behalf of a Party that is marked as "
        "confidential or that a reasonable person would understand to be confidential.",
    ),
    (
        "Deliverables",
        "means all documents, reports, software and other materials prepared by {P} for {C} "
        "under a Statement of Work.",
    ),
    ("Documentation", "means the user guides, operating manuals and specifications for the Services."),
    (
        "Good Industry Practice",
        "means the degree of skill, care and foresight reasonably expected of a "
        "skilled and experienced provider of services similar to the Services.",
    ),
    (
        "Incident",
        "means any event that causes, or may cause, an interruption to or a reduction in the "
        "quality of the Services.",
    ),
    ("Measurement Period", "means each calendar month during the Term."),
    ("Milestone", "means an event or task identified as a milestone in a Statement of Work."),
    ("Policies", "means the information security, conduct and site policies of {C} notified to {P}."),
    (
        "Processed Unit",
        "means each record that is received, validated and processed by the Services in a "
        "Measurement Period.",
    ),
    (
        "{P} Personnel",
        "means the employees and individual contractors engaged by {P} in the performance of the Services.",
    ),
    ("Service Levels", "means the service levels set out in Schedule B."),
    ("Service Location", "means each site from which the Services are performed."),
    ("Severity 1 Incident", "means an Incident that makes the Services unavailable to all users."),
    ("Statement of Work", "means each statement of work agreed by the Parties under this Agreement."),
    (
        "Steering Committee",
        "means the committee of senior representatives described in the Governance Schedule.",
    ),
    ("Term", "means the Initial Term together with any Renewal Term."),
)

INDEMNITY_TEXT = (
    "{P} shall defend, indemnify and hold harmless {C} and its officers, directors, employees and agents "
    '(the "{C} Indemnitees") from and against any and all losses, fines, penalties, costs and expenses, '
    "including reasonable attorneys' fees, arising out of any claim, suit or proceeding brought by a "
    "third party to the extent resulting from (a) the gross negligence or wilful misconduct of {P} or the "
    "{P} Personnel; (b) any breach by {P} of its confidentiality or data protection obligations "
    "under this Agreement; (c) any allegation that the Services or the Deliverables infringe or "
    "misappropriate the intellectual property rights of any person; or (d) any bodily injury, death or "
    "damage to tangible property caused by {P} in the course of performing the Services. {C} shall give "
    "{P} prompt written notice of any such claim, shall allow {P} to control its defence and settlement, "
    "and shall provide reasonable cooperation at {P}'s expense, provided that {P} shall not settle any "
    "claim in a manner that imposes any obligation on, or requires any admission by, a {C} Indemnitee "
    "without the prior written consent of {C}."
)

ARTICLES = (
    ArticleSpec("DEFINITIONS AND INTERPRETATION", None, 0.0),
    ArticleSpec(
        "TERM",
        "general",
        1.0,
        (
            ClauseSpec(
                "Effective Date and Initial Term",
                "This Agreement shall take effect on "
                + EFFECTIVE_DATE
                + ' (the "Effective Date") and, unless '
                "ended earlier in accordance with its terms, shall continue in force until "
                + EXPIRATION_DATE
                + ' (the "Initial Term").',
                {"Effective Date": (EFFECTIVE_DATE,), "Expiration Date": (EXPIRATION_DATE,)},
                label="Effective Date and Initial Term",
            ),
            ClauseSpec(
                "Automatic Renewal",
                "Upon the end of the Initial Term, this Agreement shall automatically renew for successive "
                "renewal terms of " + RENEWAL_TERM + ' each (each a "Renewal Term").',
                {"Renewal Term": (RENEWAL_TERM,)},
                label="Renewal Term",
            ),
            ClauseSpec(
                "Notice of Non-Renewal",
                "Either Party may prevent an automatic renewal by giving the other Party written notice of "
                "non-renewal at least " + NON_RENEWAL_NOTICE + " before the end of the Initial Term or the "
                "then-current Renewal Term.",
                {"Notice Period To Terminate Renewal": (NON_RENEWAL_NOTICE,)},
                label="Notice of Non-Renewal",
            ),
        ),
        lead=False,
    ),
    ArticleSpec("SERVICES", "services", 4.0),
    ArticleSpec(
        "FEES AND PAYMENT",
        "governance",
        1.0,
        (
            ClauseSpec(
                "Fees",
                "In consideration of the Services, {C} shall pay {P} a fee of " + UNIT_FEE + " per Processed "
                "Unit, as further described in Schedule A (Fee Schedule). The fees do not include applicable "
                "sales and use taxes, which {C} shall pay in addition.",
                {"payment": (UNIT_FEE,)},
                label="Fees",
            ),
            ClauseSpec(
                "Invoicing and Payment Terms",
                "{P} shall invoice {C} monthly in arrears. Each invoice shall state {C}'s customer account "
                "identifier " + CUSTOMER_ID + " and the Statement of Work to which it relates. {C} shall pay "
                "each undisputed invoice within thirty (30) days after receipt (" + PAYMENT_TERMS + ") by "
                "electronic funds transfer to the bank account designated by {P} in writing.",
                {"payment": (PAYMENT_TERMS, CUSTOMER_ID)},
                label="Payment Terms",
            ),
            ClauseSpec(
                "Records and Audit",
                "During the Term and for two (2) years thereafter, {C} or its independent auditor may, on not "
                "less than " + AUDIT_NOTICE + "' prior written notice and no more than once in any calendar "
                "year, audit the books and records of {P} relating to the fees charged under this Agreement. "
                "{P} shall provide reasonable access to its premises, systems and personnel for that purpose.",
                {"Audit Rights": (AUDIT_NOTICE,)},
                label="Audit Rights",
            ),
        ),
    ),
    ArticleSpec("SERVICE LEVELS", "service_levels", 3.0),
    ArticleSpec("GOVERNANCE AND REPORTING", "governance", 2.0),
    ArticleSpec("PERSONNEL", "personnel", 2.0),
    ArticleSpec(
        "INTELLECTUAL PROPERTY",
        "change",
        1.0,
        (
            ClauseSpec(
                "Ownership of Deliverables",
                "All right, title and interest in and to the Deliverables, including all intellectual property "
                "rights in them, shall vest in {C} upon creation. {P} hereby assigns to {C} all of its right, "
                "title and interest in and to the Deliverables and shall sign such documents as {C} may "
                "reasonably request to perfect that assignment.",
                {"Ip Ownership Assignment": ("hereby assigns",), "ip": ("hereby assigns",)},
                label="IP Ownership",
            ),
        ),
    ),
    ArticleSpec(
        "CONFIDENTIALITY",
        "data",
        1.0,
        (
            ClauseSpec(
                "Confidentiality Obligations",
                "Each Party shall hold the Confidential Information of the other Party in strict confidence, "
                "shall use it only for the purposes of this Agreement and shall not disclose it to any person "
                "other than its employees and professional advisers who need to know it and who are bound by "
                "written obligations of confidentiality no less protective than those in this Agreement. The "
                "obligations in this Section shall survive for "
                + CONFIDENTIALITY_SURVIVAL
                + " after the end "
                "of this Agreement.",
                {"other": (CONFIDENTIALITY_SURVIVAL,)},
                label="Confidentiality",
            ),
        ),
    ),
    ArticleSpec(
        "WARRANTIES",
        "services",
        1.0,
        (
            ClauseSpec(
                "Services Warranty",
                "{P} warrants that the Services will be performed in a professional and workmanlike manner and "
                "that each Deliverable will conform in all material respects to its specification for a period "
                "of " + WARRANTY_PERIOD + ' after its acceptance by {C} (the "Warranty Period").',
                {"Warranty Duration": (WARRANTY_PERIOD,)},
                label="Warranty Duration",
            ),
        ),
    ),
    ArticleSpec(
        "INDEMNIFICATION",
        "general",
        1.0,
        (
            ClauseSpec(
                "Indemnification by {P}",
                INDEMNITY_TEXT,
                {"indemnification": ("defend, indemnify and hold harmless",)},
                label="Indemnification",
                span_page_break=True,
            ),
        ),
    ),
    ArticleSpec(
        "LIMITATION OF LIABILITY",
        "general",
        1.0,
        (
            ClauseSpec(
                "Cap on Liability",
                "Each Party's total aggregate liability arising out of or in connection with this Agreement, "
                "whether in contract, tort (including negligence), breach of statutory duty or otherwise, shall "
                "in no event exceed two hundred forty-seven thousand eight hundred thirty dollars "
                "(" + CAP_AMOUNT + ").",
                {"Cap On Liability": (CAP_AMOUNT,)},
                label="Cap on Liability",
            ),
        ),
    ),
    ArticleSpec(
        "INSURANCE",
        "personnel",
        1.0,
        (
            ClauseSpec(
                "Required Insurance",
                "{P} shall, at its own cost, maintain in force during the Term and for one (1) year thereafter, "
                "with reputable insurers, commercial general liability insurance with limits of not less than "
                + INSURANCE_LIMIT
                + " per occurrence, professional liability (errors and omissions) insurance "
                "of not less than $2,000,000 per claim, and workers' compensation insurance as required by "
                "law. {P} shall provide certificates of insurance to {C} on request.",
                {"Insurance": (INSURANCE_LIMIT,)},
                label="Insurance",
            ),
        ),
    ),
    ArticleSpec(
        "TERMINATION",
        "change",
        1.0,
        (
            ClauseSpec(
                "Termination for Cause",
                "Either Party may terminate this Agreement with immediate effect by written notice if the other "
                "Party commits a material breach of this Agreement and, where the breach is capable of remedy, "
                "fails to remedy it within " + CURE_PERIOD + " after receiving written notice specifying the "
                "breach.",
                {"termination": (CURE_PERIOD,)},
                label="Termination for Cause",
            ),
            ClauseSpec(
                "Termination for Convenience",
                "{C} may terminate this Agreement, or any Statement of Work, for convenience at any time by "
                "giving {P} not less than "
                + CONVENIENCE_NOTICE
                + "' prior written notice. {C} shall pay {P} "
                "for Services properly performed up to the effective date of termination.",
                {"Termination For Convenience": (CONVENIENCE_NOTICE,)},
                label="Termination for Convenience",
            ),
        ),
    ),
    ArticleSpec(
        "RESTRICTIVE COVENANTS",
        "personnel",
        1.0,
        (
            ClauseSpec(
                "Non-Competition",
                "During the Term and for " + NON_COMPETE_PERIOD + " thereafter, {P} shall not, directly or "
                "indirectly, provide services substantially similar to the Services to any Competitor of {C} "
                'within the United States. "Competitor" means any person whose principal business competes '
                "with {C}'s principal business.",
                {"Non-Compete": (NON_COMPETE_PERIOD,)},
                label="Non-Compete",
            ),
        ),
    ),
    ArticleSpec(
        "ASSIGNMENT AND CHANGE OF CONTROL",
        "change",
        1.0,
        (
            ClauseSpec(
                "Assignment",
                "Neither Party may assign, transfer, delegate or otherwise dispose of this Agreement or any of "
                "its rights or obligations under it, whether voluntarily or by operation of law, without the "
                "prior written consent of the other Party, which shall not be unreasonably withheld. Any "
                "purported assignment in violation of this Section shall be null and void.",
                {"Anti-Assignment": ("prior written consent",)},
                label="Anti-Assignment",
            ),
            ClauseSpec(
                "Change of Control",
                "If {P} undergoes a Change of Control, {P} shall notify {C} in writing within ten (10) Business "
                "Days, and {C} may terminate this Agreement by written notice given within sixty (60) days "
                'after receipt of that notice. "Change of Control" means any transaction or series of '
                "transactions by which a person or group acquires more than " + CONTROL_THRESHOLD + " of the "
                "voting securities of {P}.",
                {"Change Of Control": (CONTROL_THRESHOLD,)},
                label="Change of Control",
            ),
        ),
    ),
    ArticleSpec("DATA PROTECTION AND SECURITY", "data", 3.0),
    ArticleSpec("CHANGE CONTROL", "change", 2.0),
    ArticleSpec(
        "GENERAL PROVISIONS",
        "general",
        1.0,
        (
            ClauseSpec(
                "Governing Law",
                "This Agreement and any dispute or claim arising out of or in connection with it shall be "
                "governed by and construed in accordance with the laws of the " + GOVERNING_LAW + ", without "
                "regard to its conflict of laws principles. Each Party submits to the jurisdiction of the state "
                "and federal courts located in New Castle County, Delaware.",
                {"Governing Law": (GOVERNING_LAW,)},
                label="Governing Law",
            ),
        ),
    ),
)


def planted_types(articles=ARTICLES) -> set[str]:
    types = {"Document Name", *PREAMBLE.types}
    for article in articles:
        for clause in article.clauses:
            types.update(clause.types)
    return types


def absent_cuad_types(articles=ARTICLES) -> tuple[str, ...]:
    """CUAD categories that the generated contract deliberately does not contain."""
    present = planted_types(articles)
    return tuple(c for c in CUAD_CATEGORIES if c not in present)
