"""Benchmarks that print JSON figures (``make bench`` runs them all through ``bench.run_all``)."""
