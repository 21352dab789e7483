"""Fitting the clause finder on a labelled corpus (cuad-train): the ``train_clause_finder`` command's work.

1. Every contract is ingested (or reused) as ``evaluate`` ingests it, and read as finder rows.
2. A sentence is labelled with a clause type when it holds one of the type's gold parts, or lies inside
   one, or shares half its words with one (Jaccard), on the gold part's page or a neighbour. A short
   part (a name, a date) labels only the first sentence that states it: a party's name recurs on
   every page, and only its place in the preamble is the answer.
   A chunk is labelled when one of its sentences is. The words' vocabulary (``extraction.finder.words``)
   is fitted on every contract's sentences: it counts in how many sentences a term is and reads no label.
3. Out-of-fold logits (``FOLDS`` folds by contract): each contract is scored by scorers that never saw
   it, so the presence model and its threshold are fitted on what unseen contracts look like.
4. The presence model (``extraction.offline.presence.fit``) on those logits; the threshold maximises
   hit rate plus silent-source rate over the out-of-fold pairs (an auditor needs both: a found clause
   that is right, and a "not found" that can be trusted).
5. The scorers are fitted again on every contract; the artifact is written. Asked to, each fold's
   finder is written too, beside the contracts it never saw (``write_folds``): ``evaluate`` run with
   it (``CLAUSE_FINDER_DIR``) measures the whole engine on contracts its scorers did not see.

Nothing here reads cuad-dev: the figures the artifact reports on cuad-dev come from ``evaluate``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from engagements.models import Engagement
from extraction import catalog
from extraction.docview import load_document
from extraction.evaluation.corpus import Corpus, load_corpus
from extraction.evaluation.metrics import CREDIT, contains, norm_text
from extraction.evaluation.runner import default_engagement_name, ingest
from extraction.evaluation.stratify import jaccard
from extraction.finder import statements
from extraction.finder.features import Sentence
from extraction.finder.model import PRESENCE_FEATURES, ClauseFinder, Scorer, presence_row
from extraction.finder.rows import DocumentRows, document_rows, sentences_within, wording
from extraction.finder.words import Vocabulary, fit_vocabulary
from extraction.offline import presence as presence_model
from ingest.pages import page_of

Say = Callable[[str], None]
FOLDS = 5
TOP_CHUNKS = 6  # a document's best chunks per type (by the chunk scorer) whose sentences the finder reads
SENTENCE_L2 = 0.01
CHUNK_L2 = 0.01
WORD_C = 3.0  # the words' logistic regressions: inverse regularisation (liblinear's C; docs/decisions.md)
WORDS_KEPT = 1000  # word weights a type keeps in each scorer (docs/decisions.md)
MAX_POSITIVE_WEIGHT = 30.0
MIN_LABEL_WORDS = 4  # a sentence shorter than this lies inside too many gold parts by chance
PAGE_SLACK = 1  # pages either side of a gold part's pages where its sentence may be


@dataclass
class Labelled:
    name: str
    rows: DocumentRows
    sentence_y: np.ndarray  # (sentences, types) 0/1
    chunk_y: np.ndarray  # (chunks, types) 0/1
    present: dict[str, bool]  # clause type -> gold says present
    gold_texts: dict[str, list[str]]  # clause type -> gold span texts


def fit_scorer(
    types: Sequence[str],
    x: np.ndarray,
    h: np.ndarray,
    y: np.ndarray,
    *,
    l2: float,
    max_positive_weight: float,
    iterations: int = 300,
) -> Scorer:
    """Weighted L2-regularised logistic regression (L-BFGS) on ``x`` (n x D shared rows), ``h``
    (n x T x H type features) and ``y`` (n x T, 0/1).

    A type's positives weigh ``sqrt(negatives / positives)``, at most ``max_positive_weight``: a
    clause is a handful of sentences among thousands, and unweighted the rare types' weights would
    shrink to "never". The scores rank passages; the presence model calibrates them."""
    x = np.asarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float32)
    n, d = x.shape
    t = y.shape[1]
    hh = h.shape[2]
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    xs = (x - mean) / scale
    pos = y.sum(axis=0)
    weight_pos = np.minimum(np.sqrt((n - pos) / np.maximum(pos, 1.0)), max_positive_weight)
    c = np.where(y > 0, weight_pos[None, :], 1.0).astype(np.float32)
    norm = float(c.sum()) / t

    def unpack(theta):
        w = theta[: d * t].reshape(d, t)
        u = theta[d * t : d * t + hh * t].reshape(hh, t)
        return w, u, theta[d * t + hh * t :]

    def objective(theta):
        w, u, b = unpack(theta.astype(np.float32))
        z = xs @ w + b + np.einsum("nth,ht->nt", h, u)
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
        loss = -(c * (y * np.log(p + 1e-9) + (1 - y) * np.log(1 - p + 1e-9))).sum() / norm
        g = c * (p - y) / norm
        gw = xs.T @ g + l2 * w
        gu = np.einsum("nth,nt->ht", h, g)
        gb = g.sum(axis=0)
        loss += 0.5 * l2 * float((w * w).sum())
        return float(loss), np.concatenate([gw.ravel(), gu.ravel(), gb]).astype(np.float64)

    theta0 = np.zeros(d * t + hh * t + t)
    result = minimize(objective, theta0, jac=True, method="L-BFGS-B", options={"maxiter": iterations})
    w, u, b = unpack(result.x.astype(np.float32))
    return Scorer(tuple(types), mean.astype(np.float32), scale.astype(np.float32), w, u, b)


def with_words(
    scorer: Scorer,
    words: sparse.csr_matrix,
    y: np.ndarray,
    *,
    c: float,
    max_positive_weight: float,
    kept: int,
) -> Scorer:
    """``scorer`` with word weights: per type, a weighted logistic regression (liblinear, inverse
    regularisation ``c``, positives weighed as in :func:`fit_scorer`) over the passages' tf-idf rows
    ``words`` alone, its logit added to the scorer's. Each type keeps its ``kept`` largest weights (by
    size) and the rest are 0: the artifact stays small, and a type is named by a few hundred phrases,
    not by fifty thousand."""
    n, t = y.shape
    v = np.zeros((words.shape[1], t), dtype=np.float32)
    b = scorer.b.copy()
    for j in range(t):
        pos = float(y[:, j].sum())
        if pos in (0.0, float(n)):  # one class only: nothing to tell apart, the type reads no words
            continue
        weight = min(np.sqrt((n - pos) / pos), max_positive_weight)
        model = LogisticRegression(
            C=c, class_weight={0: 1.0, 1: weight}, solver="liblinear", max_iter=300, random_state=0
        )
        model.fit(words, y[:, j])
        column = model.coef_[0].astype(np.float32)
        if kept < len(column):
            column[np.argsort(-np.abs(column), kind="stable")[kept:]] = 0.0
        v[:, j] = column
        b[j] += float(model.intercept_[0])
    return replace(scorer, v=v, b=b)


def sentence_holds(sentence: Sentence, page: int, part: dict) -> bool:
    """Does ``sentence`` (on ``page``) carry the gold ``part``?"""
    pages = part.get("pages") or []
    if pages and not (pages[0] - PAGE_SLACK <= page <= pages[-1] + PAGE_SLACK):
        return False
    text = part.get("text") or ""
    s_norm = norm_text(sentence.text)
    if contains(s_norm, text):
        return True
    if len(s_norm.split()) >= MIN_LABEL_WORDS and contains(norm_text(text), sentence.text):
        return True
    return jaccard(sentence.text, text) >= 0.5


def label(rows: DocumentRows, gold: Sequence[dict], types: Sequence[str]) -> Labelled:
    """One contract's labels from its gold.jsonl rows."""
    column = {t: j for j, t in enumerate(types)}
    sy = np.zeros((len(rows.sentences), len(types)), dtype=np.float32)
    cy = np.zeros((len(rows.view.chunks), len(types)), dtype=np.float32)
    pages = [page_of(s.start, rows.view.pages) for s in rows.sentences]
    present, texts = {}, {}
    for g in gold:
        t = g["clause_type"]
        if t not in column:
            continue
        present[t] = bool(g["present"])
        texts[t] = [s.get("text", "") for s in g.get("spans") or [] if s.get("text")]
        parts = [p for s in g.get("spans") or [] for p in s.get("parts") or [] if p.get("text")]
        for p in parts:
            holding = [i for i, s in enumerate(rows.sentences) if sentence_holds(s, pages[i], p)]
            if len(norm_text(p["text"]).split()) < MIN_LABEL_WORDS:
                holding = holding[:1]  # a name or a date: where it is first stated, not each mention
            sy[holding, column[t]] = 1.0
    chunks = rows.view.chunks
    for i, s in enumerate(rows.sentences):  # a sentence's first chunk, and the next ones it overlaps into
        for ci in range(s.chunk, min(len(chunks), s.chunk + 3)):
            if chunks[ci].char_start <= s.start and s.end <= chunks[ci].char_end:
                cy[ci] = np.maximum(cy[ci], sy[i])
    return Labelled(rows.view.source, rows, sy, cy, present, texts)


@dataclass(frozen=True)
class DocWords:
    """One contract's passages as tf-idf rows of the finder's vocabulary."""

    sentence: sparse.csr_matrix
    chunk: sparse.csr_matrix


def doc_words(doc: Labelled, vocabulary: Vocabulary) -> DocWords:
    return DocWords(
        vocabulary.rows([s.text for s in doc.rows.sentences]),
        vocabulary.rows([c.text for c in doc.rows.view.chunks]),
    )


def _stack(docs: Sequence[Labelled], words: Sequence[DocWords], wordings, which: str):
    if which == "sentence":
        kept = [i for i, d in enumerate(docs) if len(d.rows.sentences)]
        x = np.vstack([docs[i].rows.sentence_x for i in kept])
        h = np.concatenate([docs[i].rows.sentence_type_rows(wordings) for i in kept])
        y = np.vstack([docs[i].sentence_y for i in kept])
        v = sparse.vstack([words[i].sentence for i in kept]).tocsr()
    else:
        x = np.vstack([d.rows.chunk_x for d in docs])
        h = np.concatenate([d.rows.chunk_type_rows(wordings) for d in docs])
        y = np.vstack([d.chunk_y for d in docs])
        v = sparse.vstack([w.chunk for w in words]).tocsr()
    return x, h, y, v


def fit_both(
    docs: Sequence[Labelled], words: Sequence[DocWords], types: Sequence[str], wordings
) -> tuple[Scorer, Scorer]:
    """The sentence and chunk scorers fitted on ``docs`` (``words``: their tf-idf rows, same order)."""
    xs, hs, ys, vs = _stack(docs, words, wordings, "sentence")
    xc, hc, yc, vc = _stack(docs, words, wordings, "chunk")
    weight = MAX_POSITIVE_WEIGHT
    sentence = fit_scorer(types, xs, hs, ys, l2=SENTENCE_L2, max_positive_weight=weight)
    chunk = fit_scorer(types, xc, hc, yc, l2=CHUNK_L2, max_positive_weight=weight)
    return (
        with_words(sentence, vs, ys, c=WORD_C, max_positive_weight=weight, kept=WORDS_KEPT),
        with_words(chunk, vc, yc, c=WORD_C, max_positive_weight=weight, kept=WORDS_KEPT),
    )


def read_sentences(rows: DocumentRows, chunk_logits: np.ndarray, top: int) -> list[int]:
    """Indices of the sentences inside the ``top`` chunks by ``chunk_logits``: what the finder reads."""
    best = np.argsort(-chunk_logits, kind="stable")[:top].tolist()
    return sentences_within(
        rows.sentences, [(rows.view.chunks[i].char_start, rows.view.chunks[i].char_end) for i in best]
    )


@dataclass
class PairScore:
    doc: str
    clause_type: str
    present: bool
    row: dict
    best_sentence: str
    hit: bool  # the best sentence shares half its words with a gold span (CUAD's criterion)


def pair_scores(
    doc: Labelled, sentence_logits: np.ndarray, chunk_logits: np.ndarray, types
) -> list[PairScore]:
    out = []
    for j, t in enumerate(types):
        if t not in doc.present:
            continue
        read = read_sentences(doc.rows, chunk_logits[:, j], TOP_CHUNKS)
        s_log = sentence_logits[read, j] if read else np.zeros(0)
        best = doc.rows.sentences[read[int(np.argmax(s_log))]].text if read else ""
        hit = max((jaccard(best, g) for g in doc.gold_texts.get(t, [])), default=0.0) >= 0.5
        row = presence_row(s_log, chunk_logits[:, j])
        out.append(PairScore(doc.name, t, doc.present[t], row, best, doc.present[t] and hit))
    return out


def choose_threshold(
    pairs: Sequence[PairScore], probabilities: Sequence[float], hits: Sequence[bool]
) -> dict:
    """The probability threshold that maximises hit rate + silent-source rate over ``pairs``."""
    present = [i for i, p in enumerate(pairs) if p.present]
    absent = [i for i, p in enumerate(pairs) if not p.present]
    best = {"threshold": 0.5, "objective": -1.0}
    for th in np.round(np.arange(0.05, 0.951, 0.01), 2):
        hit = sum(1 for i in present if probabilities[i] >= th and hits[i]) / max(1, len(present))
        found = sum(1 for i in present if probabilities[i] >= th) / max(1, len(present))
        silent = sum(1 for i in absent if probabilities[i] < th) / max(1, len(absent))
        if hit + silent > best["objective"]:
            best = {
                "threshold": float(th),
                "objective": round(hit + silent, 4),
                "hit_rate": round(hit, 4),
                "false_not_found": round(1 - found, 4),
                "silent_source": round(silent, 4),
            }
    return best


def training_hash(folder: Path) -> str:
    """sha256 of the corpus's gold.jsonl and documents.jsonl: which labels the weights were fitted on."""
    h = hashlib.sha256()
    for name in ("documents.jsonl", "gold.jsonl"):
        h.update((folder / name).read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Fold:
    """One fold of the out-of-fold scoring: its contracts (indices into ``train``'s ``docs``) and a
    finder whose scorers never saw them, with the shared presence model and threshold."""

    held_out: tuple[int, ...]
    finder: ClauseFinder


def train(
    docs: Sequence[Labelled], types: Sequence[str], *, say: Say = print
) -> tuple[ClauseFinder, dict, list[Fold]]:
    """Fit the finder on ``docs``; (the finder, what out-of-fold scoring said of it, the folds)."""
    started = time.perf_counter()
    clauses = [catalog.get(t) for t in types]
    wordings = [wording(c) for c in clauses]
    vocabulary = fit_vocabulary(s.text for d in docs for s in d.rows.sentences)
    words = [doc_words(d, vocabulary) for d in docs]
    say(f"vocabulary: {len(vocabulary)} terms ({time.perf_counter() - started:.0f} s)")
    order = sorted(range(len(docs)), key=lambda i: hashlib.sha1(docs[i].name.encode()).hexdigest())
    fold_of = {i: k % FOLDS for k, i in enumerate(order)}
    pairs: list[PairScore] = []
    scorers: list[tuple[Scorer, Scorer]] = []
    stated: list[dict[str, dict]] = []
    for fold in range(FOLDS):
        fitted = [i for i in range(len(docs)) if fold_of[i] != fold]
        sentence, chunk = fit_both([docs[i] for i in fitted], [words[i] for i in fitted], types, wordings)
        scorers.append((sentence, chunk))
        stated.append(select_statements([docs[i] for i in fitted]))
        for i, d in enumerate(docs):
            if fold_of[i] != fold:
                continue
            s_log = (
                sentence.logits(
                    d.rows.sentence_x, d.rows.sentence_type_rows(wordings), words=words[i].sentence
                )
                if len(d.rows.sentences)
                else np.zeros((0, len(types)))
            )
            c_log = chunk.logits(d.rows.chunk_x, d.rows.chunk_type_rows(wordings), words=words[i].chunk)
            pairs += pair_scores(d, s_log, c_log, types)
        say(
            f"fold {fold + 1}/{FOLDS}: {len(pairs)} pairs scored out of fold "
            f"({time.perf_counter() - started:.0f} s)"
        )
    presence = presence_model.fit(
        [(p.row, p.clause_type, p.present) for p in pairs], names=PRESENCE_FEATURES, l2=1.0, type_l2=1.0
    )
    probs = [presence.probability(p.row, p.clause_type) for p in pairs]
    chosen = choose_threshold(pairs, probs, [p.hit for p in pairs])
    say(f"out of fold: {json.dumps(chosen)}")
    sentence, chunk = fit_both(docs, words, types, wordings)
    kept = select_statements(docs)
    say(f"statements kept: {json.dumps(kept)}")
    finder = ClauseFinder(
        sentence,
        chunk,
        presence,
        chosen["threshold"],
        TOP_CHUNKS,
        vocabulary,
        options={},
        meta={"out_of_fold": chosen},
        statements=kept,
    )
    report = {
        "out_of_fold": chosen,
        "statements": kept,
        "pairs": len(pairs),
        "seconds": round(time.perf_counter() - started, 1),
    }
    folds = [
        Fold(
            tuple(i for i in range(len(docs)) if fold_of[i] == k),
            ClauseFinder(
                *scorers[k],
                presence,
                chosen["threshold"],
                TOP_CHUNKS,
                vocabulary,
                options={},
                statements=stated[k],
            ),
        )
        for k in range(FOLDS)
    ]
    return finder, report, folds


def select_statements(docs: Sequence[Labelled]) -> dict[str, dict]:
    """``statements.select`` over ``docs``: the statements their labels bear out."""
    return statements.select(([s.text for s in d.rows.sentences], d.present) for d in docs)


def write_artifact(finder: ClauseFinder, folder: Path, meta: dict) -> list[Path]:
    """The artifact: ``clause_finder.npz`` (weights) and ``clause_finder.json`` (everything else)."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {**finder.sentence.arrays("sentence"), **finder.chunk.arrays("chunk")}
    weights = folder / "clause_finder.npz"
    stored: dict[str, Any] = {
        k: v.astype(np.float16 if v.ndim == 2 else np.float32) for k, v in arrays.items()
    }
    stored.update(finder.vocabulary.arrays("words"))
    np.savez_compressed(weights, **stored)  # matrices in half precision: the scores move by < 1e-3
    facts = {  # what the weights need to be read by comes last: no report overrides it
        **finder.meta,
        **meta,
        "credit": f"Fitted on {CREDIT}",
        "types": list(finder.types),
        "threshold": finder.threshold,
        "top_chunks": finder.top_chunks,
        "options": finder.options,
        "presence": finder.presence.as_dict(),
        "statements": finder.statements,
    }
    info = folder / "clause_finder.json"
    info.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    return [weights, info]


def write_folds(
    folds: Sequence[Fold], names: Sequence[str], corpus: Corpus, out: Path, trained_on: dict
) -> list[Path]:
    """Each fold as ``out/fold-K/``: its finder's artifact (``trained_on``: the corpus and its labels'
    hash), and the contracts it never saw as a corpus folder named like the corpus (``evaluate`` then
    reuses the corpus's engagement and documents)."""
    written = []
    for k, fold in enumerate(folds, 1):
        home = out / f"fold-{k}"
        held = {names[i] for i in fold.held_out}
        write_artifact(fold.finder, home, {"fold": k, "held_out": sorted(held), "trained_on": trained_on})
        sub = home / corpus.folder.name
        sub.mkdir(parents=True, exist_ok=True)
        for media in ("pdf", "txt"):
            link = sub / media
            if (corpus.folder / media).is_dir() and not link.exists():
                link.symlink_to((corpus.folder / media).resolve())
        for name, rows in (("documents.jsonl", corpus.documents), ("gold.jsonl", corpus.gold)):
            (sub / name).write_text("".join(json.dumps(r) + "\n" for r in rows if r["doc"] in held))
        written.append(home)
    return written


def train_on_corpus(
    folder: Path,
    out: Path,
    *,
    limit: int | None = None,
    engagement_name: str | None = None,
    folds_out: Path | None = None,
    say: Say = print,
) -> dict:
    """Ingest (or reuse) the corpus at ``folder`` (its first ``limit`` contracts), fit the finder on
    them, write the artifact to ``out`` (and the out-of-fold finders to ``folds_out``); what it
    measured."""
    started = time.perf_counter()
    corpus = load_corpus(folder, limit)
    if len(corpus.documents) < FOLDS:
        raise ValueError(
            f"the finder is fitted on {FOLDS} contracts or more; {folder} lists {len(corpus.documents)}"
        )
    types = sorted({g["clause_type"] for g in corpus.gold if g["clause_type"] in set(catalog.names())})
    engagement, _ = Engagement.objects.get_or_create(
        name=(engagement_name or default_engagement_name(folder))[:200],
        defaults={"client": "evaluation corpus"},
    )
    rep = ingest(corpus, engagement, say)
    say(f"ingest: {rep.created} new, {rep.reused} reused, {len(rep.failed)} not ready, {rep.pages} pages")
    by_doc: dict[str, list[dict]] = {}
    for g in corpus.gold:
        by_doc.setdefault(g["doc"], []).append(g)
    docs, names = [], []
    for i, (name, document) in enumerate(sorted(rep.documents.items()), 1):
        if document.status != "ready":
            continue
        docs.append(label(document_rows(load_document(document)), by_doc.get(name, []), types))
        names.append(name)
        if i % 20 == 0:
            say(f"read {i}/{len(rep.documents)} contracts ({time.perf_counter() - started:.0f} s)")
    finder, report, folds = train(docs, types, say=say)
    sentences = sum(len(d.rows.sentences) for d in docs)
    labels = {"corpus": folder.name, "sha256": training_hash(folder)}
    meta = {
        "trained_on": {
            **labels,
            "contracts": len(docs),
            "sentences": sentences,
            "positive_sentences": int(sum(d.sentence_y.sum() for d in docs)),
        },
        "training_seconds": round(time.perf_counter() - started, 1),
    }
    paths = write_artifact(finder, out, meta)
    if folds_out is not None:
        report["folds"] = [str(p) for p in write_folds(folds, names, corpus, folds_out, labels)]
    return {**report, **meta, "files": {p.name: p.stat().st_size for p in paths}}
