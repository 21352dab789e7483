# Pages read by OCR (ingest.ocr): their mean word confidence and word boxes; and the running stage's progress
# in words on the document ("OCR page 37 of 212"), for the documents table.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0007_document_source_url"),
    ]

    operations = [
        migrations.AddField(
            model_name="document",
            name="progress_detail",
            field=models.CharField(blank=True, max_length=120),
        ),
        migrations.AddField(
            model_name="page",
            name="ocr_confidence",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="page",
            name="ocr_words",
            field=models.JSONField(blank=True, editable=False, null=True),
        ),
    ]
