"""The offline engine on wordings users write: admin-made clause types and free questions; prints JSON.

An admin adds types the catalog lacks, in a name, a one-line description and a short query, with
no example clause. To see how such a type fares, each of eight CUAD types is re-made that way
under another name ("Choice of Law" for Governing Law, ...) and scored against the gold of the
type it restates, beside the built-in type itself on the same pairs (the baseline):
``hit_rate`` (Jaccard >= 0.5 with a gold span, CUAD's criterion), ``found_rate`` on present
pairs, ``silent_source`` (not_found where the lawyers found none), and the admin types' figures
over the built-in ones'. Before admin types were decided by the score threshold (they went
through the presence model fitted on the catalog; commit "Offline engine: an admin's own clause
type ..."), the same run gave them hit rate 0.252 and silent-source 0.914.

Free questions ("Which law governs this agreement?", asked on the review page) are scored the same
way against the type they ask about, at the engine's question threshold (``QUESTION_THRESHOLD``)
and, to show where it sits, at other thresholds on the best passage's score (``questions.curve``),
for each half of cuad-dev's documents.jsonl.

Data: CUAD v1, The Atticus Project (CC BY 4.0), the cuad-dev subset, already ingested by
``manage.py evaluate`` (its database, its engagement).

Usage: ``EMBEDDED_DIR=var/eval-extraction python -m bench.user_wordings [--corpus DIR] [--engagement NAME]``
(the engagement defaults to the one ``evaluate`` makes for the corpus folder, "evaluate: cuad-dev")
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bench._cuad import CREDIT, CUAD

# CUAD type -> (name, description, query) as an admin might write them
RESTATED = {
    "Cap On Liability": (
        "Limitation of Liability",
        "Caps or limits on the amount a party can be liable for.",
        "limitation of liability; liability shall not exceed; maximum aggregate liability",
    ),
    "Governing Law": (
        "Choice of Law",
        "Which jurisdiction's law governs the contract.",
        "governed by and construed in accordance with the laws of",
    ),
    "Termination For Convenience": (
        "Termination Without Cause",
        "A party may end the agreement without cause, for convenience, by giving notice.",
        "may terminate this agreement at any time without cause upon written notice",
    ),
    "No-Solicit Of Employees": (
        "Employee Non-Solicitation",
        "A party may not hire or solicit the other's employees.",
        "shall not solicit or hire any employee of the other party",
    ),
    "Audit Rights": (
        "Right to Audit",
        "A party's right to inspect the other's books and records.",
        "right to audit and inspect books and records",
    ),
    "Insurance": (
        "Insurance Requirements",
        "A party must carry insurance coverage.",
        "shall maintain insurance coverage; general liability insurance policy",
    ),
    "Anti-Assignment": (
        "Assignment Restrictions",
        "Limits on assigning or transferring the contract.",
        "may not assign or transfer this agreement without consent",
    ),
    "Exclusivity": (
        "Exclusive Dealing",
        "One party deals only with the other, or is the only one appointed.",
        "exclusive right; exclusive distributor; shall not appoint any other",
    ),
}


# CUAD type -> a question a reviewer might type about it
QUESTIONS = {
    "Cap On Liability": "Is there a cap on liability?",
    "Governing Law": "Which law governs this agreement?",
    "Termination For Convenience": "Can a party terminate without cause?",
    "No-Solicit Of Employees": "Can a party hire the other party's employees?",
    "Audit Rights": "Can a party audit the other's records?",
    "Insurance": "What insurance must a party carry?",
    "Anti-Assignment": "Can this agreement be assigned?",
    "Exclusivity": "Is the relationship exclusive?",
}
CURVE = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55)


def _rates(rows: list[tuple[bool, bool, bool]]) -> dict:
    """rows: (present, found, hit) -> the three rates."""
    present = [r for r in rows if r[0]]
    absent = [r for r in rows if not r[0]]
    return {
        "hit_rate": round(sum(r[2] for r in present) / len(present), 3) if present else None,
        "found_rate": round(sum(r[1] for r in present) / len(present), 3) if present else None,
        "silent_source": round(sum(not r[1] for r in absent) / len(absent), 3) if absent else None,
        "present": len(present),
        "absent": len(absent),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CUAD)
    ap.add_argument(
        "--engagement",
        default=None,
        help='the engagement `evaluate` ingested the corpus into (default: its own, "evaluate: <folder name>")',
    )
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    from extraction import catalog
    from extraction.docview import load_document
    from extraction.evaluation.metrics import PairRecord, is_hit
    from extraction.evaluation.runner import default_engagement_name
    from extraction.offline.engine import QUESTION_THRESHOLD, OfflineEngine
    from extraction.retrieval import retrieve
    from ingest.models import Document

    engagement = args.engagement or default_engagement_name(args.corpus)
    docs = {
        os.path.splitext(d.original_name)[0]: d for d in Document.objects.filter(engagement__name=engagement)
    }
    if not docs:
        raise SystemExit(f"No documents in engagement {engagement!r}: run `manage.py evaluate` first.")
    gold = [
        g
        for g in map(json.loads, (args.corpus / "gold.jsonl").open())
        if g["clause_type"] in RESTATED and g["doc"] in docs
    ]
    order = [json.loads(line)["doc"] for line in (args.corpus / "documents.jsonl").open()]
    first_half = set(order[: len(order) // 2 + len(order) % 2])
    asked: dict[str, list[tuple[bool, float, bool]]] = {
        "first_half": [],
        "second_half": [],
    }  # present, score, hit

    class AnswerAlways(OfflineEngine):
        def threshold(self, clause):
            return 0.0

    engine, always = OfflineEngine(), AnswerAlways()
    sessions: dict[int, object] = {}
    asking: dict[int, object] = {}
    rows: dict[str, dict[str, list]] = {}
    for g in gold:
        document = docs[g["doc"]]
        if document.pk not in sessions:
            view = load_document(document)
            sessions[document.pk], asking[document.pk] = engine.open_session(view), always.open_session(view)
        name, description, query = RESTATED[g["clause_type"]]
        admin = catalog.ClauseType(name, catalog.slugify(name), catalog.TEXT, description, query, "custom")
        question = QUESTIONS[g["clause_type"]]
        free = catalog.ClauseType(
            f"{catalog.QUESTION_PREFIX}{question}",
            catalog.slugify(question),
            catalog.TEXT,
            question,
            question,
            "custom",
        )
        for label, clause in (
            ("builtin", catalog.get(g["clause_type"])),
            ("admin", admin),
            ("question", free),
        ):
            retrieved = retrieve(document, clause, 5)
            session = (asking if label == "question" else sessions)[document.pk]
            out = session.extract(clause, f"{document.pk}:{clause.slug}", retrieved)
            found = out.status == "found"
            rec = PairRecord(
                g["doc"],
                g["clause_type"],
                g["present"],
                g.get("spans") or [],
                [],
                status=out.status,
                clause_text=out.clause_text if found else "",
            )
            if label == "question":  # asked with threshold 0: its passage and score, found at any threshold
                score = float(out.detail.get("best_score") or 0.0)
                half = "first_half" if g["doc"] in first_half else "second_half"
                asked[half].append((g["present"], score, found and is_hit(rec)))
                found = found and score >= QUESTION_THRESHOLD
                rec.status = out.status if found else "not_found"
            rows.setdefault(label, {}).setdefault(g["clause_type"], []).append(
                (g["present"], found, is_hit(rec))
            )
    result = {
        "credit": CREDIT,
        "documents": len({g["doc"] for g in gold}),
        "types": {
            t: {
                "admin_name": RESTATED[t][0],
                "builtin": _rates(rows["builtin"][t]),
                "admin": _rates(rows["admin"][t]),
            }
            for t in RESTATED
            if t in rows["builtin"]
        },
    }
    for label in ("builtin", "admin", "question"):
        result[label] = _rates([r for per_type in rows[label].values() for r in per_type])
    result["question"]["threshold"] = QUESTION_THRESHOLD
    result["questions_curve"] = {
        half: {str(t): _rates([(p, s >= t, h and s >= t) for p, s, h in pairs]) for t in CURVE}
        for half, pairs in asked.items()
    }
    result["admin_vs_builtin"] = {
        k: round(result["admin"][k] / result["builtin"][k], 3)
        for k in ("hit_rate", "silent_source")
        if result["builtin"][k]
    }
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
