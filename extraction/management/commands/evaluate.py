"""``manage.py evaluate CORPUS_DIR --out DIR [--limit N] [--k 5] [--engine E] [--without-finder]``

Ingests the corpus's PDFs (reusing documents already ingested), runs retrieval and extraction
on every (doc, clause_type) line of gold.jsonl, and writes DIR/predictions.jsonl and
DIR/metrics.json (see ``extraction.evaluation.metrics`` for the figures). ``--calibrate`` first fits the
offline engine's not_found threshold on the first half of documents.jsonl and saves it to
extraction/offline/calibration.json. Exits non-zero, saying why, when every pair failed (no answer: no
document became ready, or the engine failed on each): the figures of such a run measure nothing.
Credit: CUAD v1, The Atticus Project (CC BY 4.0).
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from config.commands import DataCommand
from extraction.evaluation.runner import evaluate
from extraction.models import ClauseTask


class Command(DataCommand):
    help = "Evaluate retrieval and extraction on a corpus in the cuad-dev format."

    def add_arguments(self, parser):
        parser.add_argument("corpus_dir")
        parser.add_argument("--out", required=True, help="folder for predictions.jsonl and metrics.json")
        parser.add_argument(
            "--limit", type=int, default=None, help="the first N documents of documents.jsonl"
        )
        parser.add_argument("--k", type=int, default=5, help="chunks retrieved per question")
        parser.add_argument(
            "--engine",
            choices=["offline", "anthropic"],
            default=None,
            help="default: EXTRACTION_ENGINE (auto = anthropic with an API key)",
        )
        parser.add_argument(
            "--engagement",
            default=None,
            help='engagement holding the ingested corpus (default "evaluate: <folder name>")',
        )
        parser.add_argument(
            "--without-finder",
            action="store_true",
            help="also run every pair with the clause finder off and report those figures beside",
        )
        parser.add_argument(
            "--calibrate",
            action="store_true",
            help="fit the offline not_found threshold on the first half of the corpus first",
        )

    def handle(self, *args, **options):
        folder = Path(options["corpus_dir"]).resolve()
        if not (folder / "gold.jsonl").is_file() or not (folder / "documents.jsonl").is_file():
            raise CommandError(f"{folder} is not a corpus folder (needs documents.jsonl and gold.jsonl)")
        if options["k"] < 1:
            raise CommandError("--k must be at least 1")
        if (
            options["limit"] is not None and options["limit"] < 1
        ):  # 0 would read as no limit: the whole corpus
            raise CommandError("--limit must be at least 1 (leave it out for every document)")
        try:
            m = evaluate(
                folder,
                Path(options["out"]),
                limit=options["limit"],
                k=options["k"],
                engine_name=options["engine"],
                do_calibrate=options["calibrate"],
                engagement_name=options["engagement"],
                without_finder=options["without_finder"],
                say=lambda s: self.stdout.write(s),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        o = m["overall"]
        self.stdout.write(
            f"{m['engine']} k={m['k']}: recall@k {o['recall_at_k']} (merged {o['recall_at_k_merged']}), "
            f"hit rate {o['hit_rate']}, silent-source {o['silent_source_rate']}, "
            f"false not_found {o['false_not_found_rate']} (its closest sentence the clause: "
            f"{o['false_not_found_closest_hit_rate']}), citation validity {o['citation_validity']}, "
            f"page accuracy {o['citation_page_accuracy']}"
        )
        weakest = sorted(
            ((name, t["hit_rate"]) for name, t in m["per_clause_type"].items() if t["present"]),
            key=lambda nt: (nt[1], nt[0]),
        )[:10]
        self.stdout.write("weakest clause types by hit rate: " + ", ".join(f"{n} {h}" for n, h in weakest))
        pr = m["precision_recall"]
        self.stdout.write(f"AUPR {pr['aupr']}, precision at 80% recall {pr['precision_at_80_recall']}")
        if "without_finder" in m:
            b = m["without_finder"]["overall"]
            self.stdout.write(
                f"without the clause finder: recall@k {b['recall_at_k']}, hit rate {b['hit_rate']}, "
                f"silent-source {b['silent_source_rate']}, false not_found {b['false_not_found_rate']}, "
                f"AUPR {m['without_finder']['precision_recall']['aupr']}"
            )
        credit = f" ({m['credit']})" if m["credit"] else ""
        self.stdout.write(f"wrote {options['out']}/predictions.jsonl and metrics.json{credit}")
        if o["pairs"] and o["failed"] == o["pairs"]:
            raise CommandError(
                f"every one of the {o['pairs']} pairs failed, none was answered: {why_every_pair_failed(m)}"
            )


def why_every_pair_failed(m: dict) -> str:
    """The reasons of a run in which no pair got an answer: documents never ready, the engine's errors."""
    reasons = []
    not_ready = m["documents"]["not_ready"]
    if not_ready:
        first = not_ready[0]
        reasons.append(
            f"{len(not_ready)} document(s) not ready (e.g. {first['doc']}: {first['status']}"
            + (f", {first['error']}" if first.get("error") else "")
            + ")"
        )
    errors = (
        ClauseTask.objects.filter(run_id=m["run_id"], status=ClauseTask.Status.FAILED)
        .exclude(error="")
        .values_list("error", flat=True)
        .order_by("id")[:1]
    )
    if errors:
        reasons.append(f"the engine failed (e.g. {errors[0][:300]})")
    return "; ".join(reasons) or "no clause task of the run finished"
