"""Seeded legal filler prose: operational boilerplate that reads like a contract.

The filler is deliberately *neutral*: it never touches a CUAD category (no assignment,
termination, liability, licences, exclusivity, pricing, audit, insurance, ...), so that
the planted clauses in :mod:`demo.clauses` are the only place those topics occur and
the absent categories really are absent. ``FORBIDDEN_IN_FILLER`` lists the stems a test
checks for. Text is plain ASCII (safe for fpdf2 core fonts).
"""

from __future__ import annotations

import random

# Stems that must never appear in filler (they would create an unplanned clause).
FORBIDDEN_IN_FILLER = (
    "assign",
    "terminat",
    "liab",
    "licen",
    "exclusiv",
    "price",
    "pricing",
    "audit",
    "insur",
    "indemn",
    "renew",
    "compet",
    "solicit",
    "escrow",
    "perpetual",
    "irrevoc",
    "beneficiar",
    "governed by",
    "warrant",
    "expir",
    "minimum",
    "volume",
    "damages",
    "revenue",
    "profit",
    "disparag",
    " sue ",
    "first refusal",
    "first offer",
    "affiliate",
    "source code",
    "transition",
    "most favo",
    "change of control",
    "$",
    "delaware",
    "owned",
    "ownership",
    "intellectual property",
)

ROLE_SUBJECTS = ("{P}", "{C}", "Each Party", "The Parties")
STAFF_SUBJECTS = (
    "The {P} Account Manager",
    "The {C} Representative",
    "The Steering Committee",
    "The Project Manager of each Party",
    "The Service Delivery Manager",
)

VERBS = (
    "prepare and deliver",
    "maintain",
    "document",
    "review",
    "keep up to date",
    "implement",
    "coordinate",
    "make available",
    "submit for approval",
    "validate",
    "track",
    "publish",
    "reconcile",
    "circulate",
)

OBJECTS = (
    "a detailed project plan",
    "the operational runbooks",
    "a monthly performance report",
    "the service catalogue",
    "the escalation matrix",
    "an updated staffing plan",
    "the acceptance criteria for each Deliverable",
    "the risk and issue register",
    "the release schedule",
    "the capacity forecast",
    "the business continuity procedures",
    "the configuration baseline",
    "a root-cause analysis for each Severity 1 Incident",
    "the knowledge articles",
    "the test strategy",
    "the implementation checklist",
    "the data flow diagrams",
    "the security operating procedures",
    "the training materials",
    "the service improvement plan",
    "the reporting calendar",
    "the dependency log",
)

MANNERS = (
    "in accordance with Good Industry Practice",
    "using the templates set out in the applicable Statement of Work",
    "in a form reasonably acceptable to {C}",
    "with reasonable skill, care and diligence",
    "in consultation with the {C} Representative",
    "consistently with the Documentation",
    "in accordance with the Policies notified to {P} from time to time",
    "in sufficient detail to permit the other Party to verify progress",
)

TIMINGS = (
    "within ten (10) Business Days after the date of the relevant request",
    "on a monthly basis",
    "no later than the fifth (5th) Business Day of each calendar month",
    "before the start of each Project phase",
    "at each quarterly review meeting",
    "promptly following any material change to the Services",
    "within five (5) Business Days after the end of each Measurement Period",
    "at least twenty (20) Business Days before any planned release",
    "as and when reasonably requested by the {C} Representative",
)

CONDITIONS = (
    "{P} becomes aware of any circumstance that is reasonably likely to delay a Milestone",
    "a Service Level is not met in any Measurement Period",
    "{C} requests a modification to the scope of the Services",
    "any Documentation is found to be inaccurate or incomplete",
    "a dependency identified in a Statement of Work is not satisfied",
    "an Incident affects more than one Service Location",
    "the Parties disagree on the classification of an Incident",
    "a Deliverable fails to meet its acceptance criteria",
)

REMEDIES = (
    "agree a revised timetable",
    "implement a corrective action plan",
    "reduce any adverse effect on {C}'s operations",
    "record the agreed outcome in a Change Order",
    "restore the affected Services as quickly as practicable",
    "resolve the matter at the next meeting of the Steering Committee",
)

FACTS = (
    "the Services form part of {C}'s regulated business operations",
    "timely performance is important to {C}",
    "{C} relies on the accuracy of the reports delivered under this Agreement",
    "the Services will be delivered across multiple Service Locations",
    "the Services depend on information supplied by both Parties",
    "the Project involves systems operated by more than one Party",
)

NOTHING_CLAUSES = (
    "relieve {P} of its obligation to perform the Services in accordance with this Agreement",
    "require {C} to accept any Deliverable that does not conform to its acceptance criteria",
    "be construed as a waiver of any right or remedy under this Agreement",
    "modify the Service Levels except by a Change Order signed by both Parties",
    "oblige either Party to act in breach of applicable law",
)

DOCUMENTS = (
    "Service Description",
    "Statement of Work",
    "Governance Schedule",
    "Security Schedule",
    "Service Level Schedule",
    "Implementation Plan",
    "Documentation",
)

NOUNS = (
    "report",
    "plan",
    "Change Request",
    "status update",
    "notice",
    "Deliverable",
    "procedure",
    "work product",
    "test result",
    "service review pack",
)

STANDARDS = (
    "prepared in the English language",
    "consistent with the Service Description",
    "complete, accurate and not misleading in any material respect",
    "reviewed by a suitably qualified member of the {P} Personnel",
    "clearly marked with the relevant Statement of Work reference",
    "stored in the shared project repository",
)

RECORDS = (
    "complete and accurate records of the Services performed",
    "a log of all Incidents and their resolution",
    "a register of all Change Requests and their status",
    "time sheets for all {P} Personnel engaged on the Project",
    "minutes of each review meeting",
)

PURPOSES = (
    "demonstrate performance against the Service Levels",
    "allow the Steering Committee to monitor progress",
    "support the preparation of the monthly performance report",
    "enable the other Party to plan its own activities",
)


SENTENCE_KINDS = 10


class LegalProse:
    """Deterministic generator of contract-style sentences and paragraphs."""

    def __init__(self, seed: int = 0, *, customer: str = "Customer", provider: str = "Provider"):
        self.rng = random.Random(seed)
        self.roles = {"C": customer, "P": provider}

    def _pick(self, options):
        return self.rng.choice(options).format(**self.roles)

    def _lower_subject(self, subject: str) -> str:
        if subject.startswith(("The ", "Each ")):
            return subject[0].lower() + subject[1:]
        return subject

    def sentence(self, kind: int | None = None) -> str:
        """One sentence; ``kind`` (0-9) picks its template, random when None."""
        r = self.rng
        subj = self._pick(ROLE_SUBJECTS if r.random() < 0.6 else STAFF_SUBJECTS)
        low = self._lower_subject(subj)
        verb, obj = self._pick(VERBS), self._pick(OBJECTS)
        kind = r.randrange(SENTENCE_KINDS) if kind is None else kind
        if kind == 0:
            return f"{subj} shall {verb} {obj} {self._pick(MANNERS)}."
        if kind == 1:
            return f"Unless otherwise agreed in a Statement of Work, {low} shall {verb} {obj} {self._pick(TIMINGS)}."
        if kind == 2:
            return f"Without limiting the generality of the foregoing, {low} shall {verb} {obj} {self._pick(MANNERS)}."
        if kind == 3:
            return f"Each {self._pick(NOUNS)} delivered under this Section shall be {self._pick(STANDARDS)}."
        if kind == 4:
            subj = self._pick(("{P}", "{C}", "Each Party"))
            return (
                f"{subj} acknowledges that {self._pick(FACTS)} and, accordingly, "
                f"shall {verb} {obj} {self._pick(TIMINGS)}."
            )
        if kind == 5:
            return (
                f"Where {self._pick(CONDITIONS)}, {low} shall promptly notify the other Party in "
                f"writing and the Parties shall cooperate in good faith to {self._pick(REMEDIES)}."
            )
        if kind == 6:
            return f"For the avoidance of doubt, nothing in this Section shall {self._pick(NOTHING_CLAUSES)}."
        if kind == 7:
            return (
                f"The obligations in this Section are in addition to, and not in substitution for, "
                f"the requirements of the {self._pick(DOCUMENTS)} applicable to the relevant Services."
            )
        if kind == 8:
            return (
                f"{subj} shall maintain {self._pick(RECORDS)} in sufficient detail to {self._pick(PURPOSES)}."
            )
        return (
            f"{subj} shall {verb} {obj} {self._pick(TIMINGS)}, and shall ensure that it is "
            f"{self._pick(STANDARDS)}."
        )

    def paragraph(self, sentences: tuple[int, int] = (3, 5)) -> str:
        """Sentences of distinct kinds; a "for the avoidance of doubt" one only comes last."""
        count = self.rng.randint(*sentences)
        kinds = self.rng.sample(range(SENTENCE_KINDS), count)
        if 6 in kinds:
            kinds.remove(6)
            kinds.append(6)
        return " ".join(self.sentence(kind) for kind in kinds)

    def section(self, max_paragraphs: int = 3) -> list[str]:
        """Paragraphs of one section (always under a page); later ones lettered (b), (c), ..."""
        count = self.rng.randint(1, max_paragraphs)
        if count == 1:
            return [self.paragraph()]
        return [f"({chr(ord('a') + i)}) {self.paragraph((2, 4))}" for i in range(count)]


AREAS = {
    "services": ("Service", "Project", "Implementation", "Service Location", "Onboarding", "Release"),
    "governance": (
        "Governance",
        "Reporting",
        "Steering Committee",
        "Escalation",
        "Meeting",
        "Performance Review",
    ),
    "personnel": ("Personnel", "Staffing", "Key Personnel", "Training", "Onsite Attendance", "Conduct"),
    "service_levels": (
        "Service Level",
        "Incident",
        "Measurement",
        "Availability",
        "Support",
        "Problem Management",
    ),
    "data": (
        "Data Handling",
        "Security",
        "Access Control",
        "Backup",
        "Information Management",
        "Vulnerability",
    ),
    "change": (
        "Change Control",
        "Change Request",
        "Impact Assessment",
        "Scheduling",
        "Planning",
        "Documentation",
    ),
    "general": (
        "Notice",
        "Record Keeping",
        "Communication",
        "Cooperation",
        "Dispute Escalation",
        "Document Control",
    ),
}
ASPECTS = (
    "Requirements",
    "Procedures",
    "Responsibilities",
    "Standards",
    "Plans",
    "Reviews",
    "Records",
    "Obligations",
    "Arrangements",
    "Controls",
    "Processes",
    "Management",
)


class TitlePool:
    """Unique section titles for one filler topic, cycling with a suffix when exhausted."""

    def __init__(self, rng: random.Random, topic: str):
        self.titles = [f"{a} {b}" for a in AREAS[topic] for b in ASPECTS]
        rng.shuffle(self.titles)
        self.used = 0

    def next(self) -> str:
        title = self.titles[self.used % len(self.titles)]
        rnd = self.used // len(self.titles)
        self.used += 1
        return title if rnd == 0 else f"{title} (Phase {rnd + 1})"
