"""Keep chunk vectors inline in the heap row (STORAGE PLAIN) instead of TOAST.

A 384-d vector is 1,540 bytes; with the text and tsvector beside it a row passes the TOAST
threshold and PostgreSQL moved the vector out of line, so an exact scan of a document's
chunks read ~3 pages per row. Inline, the exact scan of 10k chunks ran ~3x faster
(bench/bench_search.py). Text and tsvector are compressed/toasted instead.
"""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("ingest", "0002_documentstage_attempts"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE ingest_chunk ALTER COLUMN embedding SET STORAGE PLAIN",
            reverse_sql="ALTER TABLE ingest_chunk ALTER COLUMN embedding SET STORAGE DEFAULT",
        ),
    ]
