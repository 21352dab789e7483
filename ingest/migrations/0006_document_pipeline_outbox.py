from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0005_doc_type_read_by_claude"),
    ]

    operations = [
        migrations.AddField(
            model_name="document",
            name="pipeline_queued_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="document",
            name="pipeline_then",
            field=models.JSONField(blank=True, editable=False, null=True),
        ),
    ]
