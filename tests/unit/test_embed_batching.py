"""Embedding batches: windows sorted globally by length, batches run in parallel with the same result."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ingest.embeddings import DIMENSIONS, WINDOW_TOKENS, Embedder


class FakeEmbedder(Embedder):
    """The real tokenizer and windowing; a deterministic vector per window text instead of the model."""

    backend = "fake"

    def __init__(self, workers: int = 1):
        super().__init__()
        self.workers = workers
        self.batches: list[list[str]] = []

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        self.batches.append(texts)
        rows = [
            np.frombuffer(hashlib.sha512(t.encode()).digest() * 6, dtype=np.uint8)[:DIMENSIONS] for t in texts
        ]
        return np.asarray(rows, dtype=np.float32) - 127.5


def _texts() -> list[str]:
    words = [
        "The",
        "Licensee",
        "shall",
        "indemnify",
        "the",
        "Licensor",
        "against",
        "all",
        "third-party",
        "claims",
        "arising",
        "hereunder",
    ]
    rng = np.random.default_rng(3)
    return [" ".join(rng.choice(words, size=int(n))) + "." for n in rng.integers(3, 700, size=150)]


def test_windows_are_batched_longest_first_across_all_texts():
    embedder = FakeEmbedder()
    texts = _texts()
    embedder.encode(texts, batch_size=8)
    sizes = [
        [len(embedder._tokenizer.encode(t, add_special_tokens=False).ids) for t in batch]
        for batch in embedder.batches
    ]
    flat = [n for batch in sizes for n in batch]
    # Re-tokenizing a window's text may differ by a piece or two at its cut; the order holds otherwise.
    assert all(a >= b - 2 for a, b in zip(flat, flat[1:]))
    assert max(flat) <= WINDOW_TOKENS + 2 and len(flat) > len(texts)  # long texts became several windows


@pytest.mark.parametrize("workers", [2, 3])
def test_parallel_batches_give_the_same_vectors(workers):
    texts = _texts()
    serial = FakeEmbedder(workers=1).encode(texts, batch_size=8)
    parallel = FakeEmbedder(workers=workers).encode(texts, batch_size=8)
    assert parallel.shape == (len(texts), DIMENSIONS)
    np.testing.assert_array_equal(serial, parallel)
    np.testing.assert_allclose(np.linalg.norm(parallel, axis=1), 1.0, atol=1e-5)


def test_onnx_parallel_equals_serial_and_a_text_alone():
    """Same batches on one or two threads give the same vectors; batching does not change them meaningfully."""
    from ingest.embeddings import OnnxEmbedder

    texts = _texts()[:40]
    serial, parallel = OnnxEmbedder(threads=1), OnnxEmbedder(threads=2)
    a = serial.encode(texts, batch_size=8)
    np.testing.assert_allclose(a, parallel.encode(texts, batch_size=8), atol=1e-6)
    alone = np.stack([serial.encode([t])[0] for t in texts[:5]])
    assert float((alone * a[:5]).sum(axis=1).min()) > 0.99  # int8 activations are quantized per batch
