"""The clause catalog as plain data.

Five seed types (indemnification, termination, payment, ip, other) plus the 41
CUAD categories under their exact CUAD names. Descriptions, retrieval queries and
example clauses (``catalog_examples``) are our own wording. ``kind`` is ``"value"`` where the answer is a
short value (a date, a name, a law, a period) and ``"text"`` where it is a clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from extraction.catalog.examples import EXAMPLES

TEXT = "text"
VALUE = "value"


@dataclass(frozen=True)
class ClauseType:
    name: str
    slug: str
    kind: str
    description: str
    query: str
    source: str  # "seed" or "cuad"
    example: str = ""  # a model clause of this type, searched as one more query (catalog_examples)


def slugify(name: str) -> str:
    """'Revenue/Profit Sharing' -> 'revenue-profit-sharing'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def name_key(name: str) -> str:
    """What names of one clause type share: capitals, spacing and punctuation aside, in any script
    ('Governing Law', 'governing  law', 'GOVERNING-LAW' -> 'governing law'; '保密条款' stays itself)."""
    return " ".join(re.sub(r"[\W_]+", " ", name.casefold()).split()) or " ".join(name.casefold().split())


def _ct(name: str, kind: str, source: str, description: str, query: str) -> ClauseType:
    return ClauseType(
        name,
        slugify(name),
        kind,
        " ".join(description.split()),
        " ".join(query.split()),
        source,
        EXAMPLES[name],
    )


_SEED = [
    (
        "Indemnification",
        TEXT,
        """A promise by one party to cover the other's losses, damages, costs and legal fees arising from
     specified events, typically third-party claims caused by the indemnifying party's breach, negligence,
     misconduct or infringement, often with a procedure for notice, defence and settlement of claims.""",
        """indemnify defend and hold harmless the other party its officers directors employees from and
     against any losses damages liabilities costs and attorneys' fees arising out of third-party claims""",
    ),
    (
        "Termination",
        TEXT,
        """Any provision that lets a party end the agreement before or at the end of its term: for breach
     after a cure period, insolvency, convenience, change of control or other triggers, together with the
     notice required and what happens to rights and obligations once it ends.""",
        """either party may terminate this agreement upon written notice in the event of material breach not
     cured within days, insolvency or bankruptcy; effect of termination""",
    ),
    (
        "Payment",
        TEXT,
        """The money terms: what is paid, by whom, how much, when and how - fees, rent, prices, invoicing,
     due dates, currency, late-payment interest, taxes and expense reimbursement.""",
        """shall pay a fee rent price amount per month payable invoice payment due within days of receipt
     currency taxes reimbursement of expenses""",
    ),
    (
        "IP",
        TEXT,
        """Terms about intellectual property: who owns pre-existing and newly created patents, copyrights,
     trademarks, know-how and software, licences granted between the parties, and protection of those
     rights.""",
        """intellectual property rights ownership patents copyrights trademarks trade secrets know-how license
     retain all right title and interest""",
    ),
    (
        "Other",
        TEXT,
        """A notable clause that fits none of the other types but matters to the audit, such as an unusual
     obligation, a side arrangement, or a term that shifts risk in an unexpected way.""",
        """unusual obligation special condition side agreement notwithstanding anything to the contrary""",
    ),
]

_CUAD = [
    (
        "Document Name",
        VALUE,
        """The title the contract gives itself, usually the heading on its first page (for example a
     distribution, licence, supply or services agreement).""",
        """title of the agreement heading on the first page this agreement is entitled""",
    ),
    (
        "Parties",
        VALUE,
        """The legal persons who sign and are bound by the contract, with the short names they are called by
     in the rest of the document, usually stated in the opening paragraph.""",
        """this agreement is entered into by and between company incorporated under the laws of with its
     principal place of business hereinafter referred to as party""",
    ),
    (
        "Agreement Date",
        VALUE,
        """The date on which the contract is dated or signed, normally stated in the preamble or next to the
     signatures.""",
        """this agreement is made and entered into as of the date dated this day of month year""",
    ),
    (
        "Effective Date",
        VALUE,
        """The date from which the contract's obligations start to run, which may differ from the signing date
     or depend on an event such as approval or closing.""",
        """this agreement shall become effective on the effective date commencement date shall commence on""",
    ),
    (
        "Expiration Date",
        VALUE,
        """When the initial term ends: a calendar date, a period measured from the effective date, or an
     indication that the contract runs indefinitely or until terminated.""",
        """the initial term of this agreement shall commence and continue for a period of years and expire on
     unless earlier terminated""",
    ),
    (
        "Renewal Term",
        VALUE,
        """What happens after the initial term: automatic or optional extension for further periods, the
     length of each renewal and any conditions on it.""",
        """this agreement shall automatically renew for successive renewal terms of one year unless either
     party gives notice of non-renewal""",
    ),
    (
        "Notice Period To Terminate Renewal",
        VALUE,
        """How far in advance a party must give notice to stop the contract from renewing, for example ninety
     days before the end of the current term.""",
        """notice of its intention not to renew at least days prior to the expiration of the then-current
     term""",
    ),
    (
        "Governing Law",
        VALUE,
        """The jurisdiction whose law the parties chose to govern the interpretation and enforcement of the
     contract.""",
        """this agreement shall be governed by and construed in accordance with the laws of the state of
     without regard to conflicts of law principles""",
    ),
    (
        "Most Favored Nation",
        TEXT,
        """A promise that the counterparty will get terms at least as good as those the other party grants to
     any third party, with adjustment if better terms are later offered to someone else.""",
        """terms no less favorable than those offered to any other customer; if more favorable pricing is
     granted to a third party the same terms shall be extended""",
    ),
    (
        "Non-Compete",
        TEXT,
        """A restriction on a party (or its affiliates) from engaging in, or investing in, a business that
     competes with the other party, within a field, territory or period.""",
        """shall not directly or indirectly engage in any business that competes with, develop or sell
     competing products, during the term and for a period thereafter within the territory""",
    ),
    (
        "Exclusivity",
        TEXT,
        """A commitment to deal only with the counterparty, or to grant it sole rights, in a product line,
     territory or customer segment, excluding third parties.""",
        """exclusive distributor sole and exclusive right shall not appoint any other distributor or purchase
     from any third party in the territory""",
    ),
    (
        "No-Solicit Of Customers",
        TEXT,
        """A restriction on soliciting or doing business with the other party's customers, clients or
     accounts, during the term or for a period after it.""",
        """shall not solicit or accept business from or induce any customer or client of the other party to
     cease doing business""",
    ),
    (
        "Competitive Restriction Exception",
        TEXT,
        """A carve-out that limits a non-compete, exclusivity or non-solicitation covenant, allowing certain
     activities, products, acquisitions or persons despite the restriction.""",
        """notwithstanding the foregoing restriction nothing shall prevent a party from; the exclusivity shall
     not apply to; general solicitations not targeted""",
    ),
    (
        "No-Solicit Of Employees",
        TEXT,
        """A restriction on recruiting, hiring or enticing away the other party's employees or contractors,
     often with exceptions for general job advertisements.""",
        """shall not solicit for employment hire or recruit any employee of the other party during the term
     and for months thereafter""",
    ),
    (
        "Non-Disparagement",
        TEXT,
        """A commitment not to make negative, damaging or derogatory statements about the other party, its
     products or its people.""",
        """shall not make any disparaging or derogatory statements about the other party its products or
     reputation""",
    ),
    (
        "Termination For Convenience",
        TEXT,
        """A right to end the contract without cause, simply by giving notice (sometimes with a fee), as
     opposed to termination for breach or insolvency.""",
        """may terminate this agreement at any time for any reason or no reason without cause for convenience
     upon days prior written notice""",
    ),
    (
        "Rofr/Rofo/Rofn",
        TEXT,
        """A right of first refusal, first offer or first negotiation: before selling, licensing or
     contracting with a third party, a party must first offer the deal to, or negotiate with, the
     counterparty.""",
        """right of first refusal right of first offer right of first negotiation before offering to any third
     party shall first offer""",
    ),
    (
        "Change Of Control",
        TEXT,
        """Consequences when ownership or control of a party changes through merger, acquisition or sale of
     substantially all assets: a right to terminate, a need for consent or notice, or deemed assignment.""",
        """in the event of a change of control merger acquisition or sale of all or substantially all of its
     assets or voting stock the other party may terminate or consent is required""",
    ),
    (
        "Anti-Assignment",
        TEXT,
        """A limit on transferring the contract or rights under it: assignment requires the other party's
     consent or notice, and transfers in breach are void.""",
        """may not assign or transfer this agreement or any rights or obligations hereunder without the prior
     written consent of the other party; any attempted assignment shall be void""",
    ),
    (
        "Revenue/Profit Sharing",
        TEXT,
        """An obligation to share revenue or profit with the counterparty: royalties, commissions, a
     percentage of sales or net profits.""",
        """royalty percentage of net sales revenue share profit sharing commission payable on gross
     revenues""",
    ),
    (
        "Price Restrictions",
        TEXT,
        """Limits on changing prices: a cap on increases, prices fixed for a period, or a requirement to lower
     prices in stated circumstances.""",
        """prices shall not be increased during; price increase limited to percent; prices fixed for the
     term""",
    ),
    (
        "Minimum Commitment",
        TEXT,
        """A minimum quantity, volume, spend or revenue that a party must buy, sell or achieve over a
     period.""",
        """minimum purchase commitment shall purchase at least minimum annual quantity minimum order volume
     minimum sales target""",
    ),
    (
        "Volume Restriction",
        TEXT,
        """A ceiling or threshold on use or volume (units, users, sites, transactions) beyond which extra
     fees, consent or a new licence are needed.""",
        """shall not exceed the maximum number of units users copies; usage in excess of the limit subject to
     additional fees""",
    ),
    (
        "Ip Ownership Assignment",
        TEXT,
        """A transfer of ownership of intellectual property from one party to the other, for instance work
     product or inventions created under the contract becoming the counterparty's property.""",
        """hereby assigns all right title and interest in and to the intellectual property inventions work
     product shall be the sole property of""",
    ),
    (
        "Joint Ip Ownership",
        TEXT,
        """Intellectual property that the parties own together, such as jointly developed inventions, with
     terms on how each may use or exploit it.""",
        """jointly owned by the parties joint inventions jointly developed intellectual property owned in
     undivided shares""",
    ),
    (
        "License Grant",
        TEXT,
        """A grant of a licence or sublicence by one party to the other to use, make, sell or reproduce its
     intellectual property, content, software or marks.""",
        """hereby grants a non-exclusive license to use reproduce distribute the licensed technology
     trademarks software""",
    ),
    (
        "Non-Transferable License",
        TEXT,
        """A statement that a licence granted under the contract cannot be transferred, assigned or
     sublicensed by the licensee.""",
        """non-transferable non-sublicensable license may not be assigned or sublicensed to any third
     party""",
    ),
    (
        "Affiliate License-Licensor",
        TEXT,
        """A licence that covers intellectual property owned by the licensor's affiliates, not only by the
     licensor itself.""",
        """license to intellectual property owned by licensor and its affiliates; licensor on behalf of its
     affiliates grants""",
    ),
    (
        "Affiliate License-Licensee",
        TEXT,
        """A licence that extends to the licensee's affiliates, letting group companies of the licensee use
     the licensed rights.""",
        """license granted to licensee and its affiliates; affiliates of licensee may use the licensed
     rights""",
    ),
    (
        "Unlimited/All-You-Can-Eat-License",
        TEXT,
        """A licence that allows unlimited use, copies or deployments for a fixed fee, without counting units,
     seats or volumes.""",
        """unlimited number of copies users or sites enterprise-wide license without additional charge""",
    ),
    (
        "Irrevocable Or Perpetual License",
        TEXT,
        """A licence that cannot be revoked, or that lasts forever or beyond the end of the contract.""",
        """irrevocable perpetual worldwide royalty-free license that survives termination of this
     agreement""",
    ),
    (
        "Source Code Escrow",
        TEXT,
        """An arrangement to deposit source code with a third-party escrow agent, released to the licensee on
     events such as the vendor's insolvency or failure to support.""",
        """source code shall be deposited with an escrow agent and released upon bankruptcy or failure to
     maintain""",
    ),
    (
        "Post-Termination Services",
        TEXT,
        """Obligations that continue after the contract ends: transition assistance, wind-down, sell-off
     periods, continued support or return of materials.""",
        """following termination or expiration shall continue to provide transition services wind down sell
     off remaining inventory for a period after termination""",
    ),
    (
        "Audit Rights",
        TEXT,
        """A right to inspect or audit the other party's books, records, facilities or compliance, with
     notice, frequency and cost allocation.""",
        """right to audit inspect books and records upon reasonable notice during normal business hours at its
     own expense independent auditor""",
    ),
    (
        "Uncapped Liability",
        TEXT,
        """A case in which a party's liability is not limited: carve-outs from the cap or exclusions for
     fraud, wilful misconduct, confidentiality breach, indemnities or personal injury.""",
        """the limitation of liability shall not apply to breach of confidentiality indemnification
     obligations gross negligence wilful misconduct fraud""",
    ),
    (
        "Cap On Liability",
        TEXT,
        """A ceiling on the amount a party can be liable for, such as fees paid in a prior period or a fixed
     sum, including limits on the time to bring claims.""",
        """in no event shall total aggregate liability exceed the amount of fees paid in the twelve months
     preceding the claim; limitation of liability""",
    ),
    (
        "Liquidated Damages",
        TEXT,
        """A pre-agreed amount payable on a given breach or early termination, instead of proving actual
     damages, including termination fees and penalties.""",
        """liquidated damages a fixed amount per day of delay termination fee payable not as a penalty""",
    ),
    (
        "Warranty Duration",
        TEXT,
        """How long a warranty on products or services lasts, or the period within which defects must be
     reported.""",
        """warrants that the products shall be free from defects for a period of months from delivery warranty
     period""",
    ),
    (
        "Insurance",
        TEXT,
        """An obligation to hold insurance cover (liability, property, product, professional), with minimum
     amounts, named insureds or certificates.""",
        """shall maintain insurance coverage with limits of not less than per occurrence general liability
     product liability certificate of insurance additional insured""",
    ),
    (
        "Covenant Not To Sue",
        TEXT,
        """A promise not to bring claims, or not to challenge the other party's intellectual property or its
     validity.""",
        """shall not challenge contest the validity of the licensed patents trademarks or bring any claim or
     action against""",
    ),
    (
        "Third Party Beneficiary",
        TEXT,
        """A statement that a non-party may enforce rights under the contract, or that nobody other than the
     parties may.""",
        """third party beneficiary nothing in this agreement shall confer any rights or remedies upon any
     person other than the parties""",
    ),
]

SEED_TYPES: tuple[ClauseType, ...] = tuple(_ct(n, k, "seed", d, q) for n, k, d, q in _SEED)
CUAD_TYPES: tuple[ClauseType, ...] = tuple(_ct(n, k, "cuad", d, q) for n, k, d, q in _CUAD)
CATALOG: tuple[ClauseType, ...] = SEED_TYPES + CUAD_TYPES

_BY_NAME = {c.name: c for c in CATALOG}
_BY_SLUG = {c.slug: c for c in CATALOG}


def names() -> list[str]:
    """All catalog names, seed first, in catalog order."""
    return [c.name for c in CATALOG]


def get(name_or_slug: str) -> ClauseType:
    """Look a clause type up by exact name or slug (KeyError if unknown)."""
    if name_or_slug in _BY_NAME:
        return _BY_NAME[name_or_slug]
    return _BY_SLUG[name_or_slug]


QUESTION_PREFIX = "Q: "  # the name of a free question's clause type (``extraction.service.question_type``)


def is_question(clause) -> bool:
    """A free question asked on the review page rather than a type of the catalog or an admin's."""
    return clause.source == "custom" and clause.name.startswith(QUESTION_PREFIX)


BUILT_IN_SOURCES = ("seed", "cuad")


def is_built_in(clause) -> bool:
    """A type of the catalog this code ships (seed or CUAD), rather than an admin's own or a question."""
    return clause.source in BUILT_IN_SOURCES


def rivals(clause) -> tuple[ClauseType, ...]:
    """The built-in types a passage for ``clause`` is told apart from (the offline engine's
    ``type_margin``): the other types of its own taxonomy, since the seed types are umbrellas over
    CUAD's ("Termination" covers Termination For Convenience and is no alternative to it); for an
    admin's own type, every built-in type but itself."""
    own = [c for c in CATALOG if c.source == clause.source] if is_built_in(clause) else CATALOG
    return tuple(c for c in own if c.name != clause.name)
