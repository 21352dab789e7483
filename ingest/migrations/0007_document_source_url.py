# A contract fetched from a URL: its source URL and fetch time, the "fetching" status, and no content hash
# until its bytes are in (the one-document-per-content rule then leaves the blank hash out).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0006_document_pipeline_outbox"),
    ]

    operations = [
        migrations.AddField(
            model_name="document",
            name="source_url",
            field=models.URLField(blank=True, max_length=2000),
        ),
        migrations.AddField(
            model_name="document",
            name="fetched_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="document",
            name="sha256",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AlterField(
            model_name="document",
            name="status",
            field=models.CharField(
                choices=[
                    ("fetching", "Fetching"),
                    ("queued", "Queued"),
                    ("converting", "Converting"),
                    ("chunking", "Chunking"),
                    ("embedding", "Embedding"),
                    ("indexing", "Indexing"),
                    ("ready", "Ready"),
                    ("failed", "Failed"),
                    ("needs_ocr", "needs OCR"),
                ],
                db_index=True,
                default="queued",
                max_length=16,
            ),
        ),
        migrations.RemoveConstraint(
            model_name="document",
            name="one_document_per_content",
        ),
        migrations.AddConstraint(
            model_name="document",
            constraint=models.UniqueConstraint(
                condition=models.Q(("sha256", ""), _negated=True),
                fields=("engagement", "sha256"),
                name="one_document_per_content",
            ),
        ),
    ]
