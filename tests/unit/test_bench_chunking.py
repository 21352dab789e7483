"""bench/bench_chunking.py on a generated contract (its baseline, pages kept) and without the corpus."""

from __future__ import annotations

from demo import make_contract_pdf


def test_conversion_has_a_baseline_and_counts_its_pages(tmp_path):
    from bench.bench_chunking import bench_conversion

    pdfs = [make_contract_pdf(tmp_path / f"c{i}.pdf", pages=12, seed=i).path for i in range(2)]
    figures = bench_conversion(pdfs, baseline=True)
    assert figures["documents"] == 2 and figures["pages"] == 24
    assert figures["ours"]["pages_kept"] == 24
    # pdfminer keeps every page break (and ends each page with one): 12 pages kept per contract, not 13
    assert figures["baseline"]["pages_kept"] == 24
    assert figures["speedup_wall"] > 0 and figures["speedup_cpu"] > 0


def test_without_the_corpus_it_says_so(tmp_path, capsys):
    from bench.bench_chunking import main

    result = main(["--corpus", str(tmp_path / "cuad-dev")])
    assert result["skipped"].startswith(f"no corpus at {tmp_path / 'cuad-dev'}")
    assert '"skipped"' in capsys.readouterr().out


def test_fixed_size_baseline_windows_overlap_and_carry_their_pages():
    from bench.bench_chunking import fixed_size_chunks
    from ingest.pages import PageSpan

    text = "a" * 150 + "\f" + "b" * 99  # page 1: [0, 150), page 2: [151, 250)
    pages = [PageSpan(1, 0, 150), PageSpan(2, 151, 250)]
    chunks = fixed_size_chunks(text, pages, max_chars=100, overlap=0.2)
    # 80-character steps: each window repeats the last 20 characters of the one before; the last ends the text
    assert chunks == [(0, 100, 1, 1), (80, 180, 1, 2), (160, 250, 2, 2)]
