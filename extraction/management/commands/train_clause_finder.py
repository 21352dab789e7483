"""``manage.py train_clause_finder CORPUS_DIR --out DIR``: fit the clause finder on a labelled corpus.

Ingests the corpus's PDFs (reusing documents already ingested, as ``evaluate`` does), fits the
sentence and chunk scorers and the presence model (``extraction.finder.training``), and writes
DIR/clause_finder.npz and DIR/clause_finder.json. The app loads the committed artifact from
``extraction/finder/artifact/``; ``make run`` and ``make test`` never train.

``--folds-out FOLDS`` also writes FOLDS/fold-K/ for each of the out-of-fold scoring's folds: a finder
whose scorers never saw that fold's contracts, and those contracts as a corpus folder. The engine's
figures on contracts its scorers did not see, fold K::

    CLAUSE_FINDER_DIR=FOLDS/fold-K manage.py evaluate FOLDS/fold-K/cuad-train --out DIR --engine offline

Fit on cuad-train only: CUAD v1, The Atticus Project (CC BY 4.0).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import CommandError

from config.commands import DataCommand
from extraction.finder.training import train_on_corpus


class Command(DataCommand):
    help = "Fit the clause finder on a labelled corpus in the cuad-dev format (cuad-train)."

    def add_arguments(self, parser):
        parser.add_argument("corpus_dir")
        parser.add_argument(
            "--out", required=True, help="folder for clause_finder.npz and clause_finder.json"
        )
        parser.add_argument(
            "--limit", type=int, default=None, help="the first N contracts of documents.jsonl (a quick fit)"
        )
        parser.add_argument(
            "--folds-out",
            default=None,
            help="also write each fold's finder and the contracts it never saw (FOLDS/fold-K/)",
        )
        parser.add_argument(
            "--engagement",
            default=None,
            help='engagement holding the ingested corpus (default "evaluate: <folder name>")',
        )

    def handle(self, *args, **options):
        folder = Path(options["corpus_dir"]).resolve()
        if not (folder / "gold.jsonl").is_file() or not (folder / "documents.jsonl").is_file():
            raise CommandError(f"{folder} is not a corpus folder (needs documents.jsonl and gold.jsonl)")
        if folder.name == "cuad-dev":
            raise CommandError("cuad-dev chooses between methods and reports figures; fit on cuad-train")
        try:
            report = train_on_corpus(
                folder,
                Path(options["out"]),
                limit=options["limit"],
                engagement_name=options["engagement"],
                folds_out=Path(options["folds_out"]) if options["folds_out"] else None,
                say=self.stdout.write,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(json.dumps(report, indent=1))
