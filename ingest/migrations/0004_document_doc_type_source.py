"""Record where a document's type came from: the upload, its title (ingest.doctype) or an admin.

Existing documents: a type whose convert stage says "read from its title" came from the title,
any other type from the upload.
"""
from django.db import migrations, models


def fill_sources(apps, schema_editor):
    Document = apps.get_model("ingest", "Document")
    typed = Document.objects.exclude(doc_type="")
    titled = typed.filter(stages__name="convert", stages__detail__contains="read from its title")
    titled.update(doc_type_source="title")
    typed.filter(doc_type_source="").update(doc_type_source="upload")


class Migration(migrations.Migration):

    dependencies = [
        ("ingest", "0003_chunk_embedding_storage_plain"),
    ]

    operations = [
        migrations.AddField(
            model_name="document",
            name="doc_type_source",
            field=models.CharField(blank=True, choices=[("upload", "given at upload"), ("title", "read from its title"),
                                                        ("admin", "set by an admin")], max_length=8),
        ),
        migrations.RunPython(fill_sources, migrations.RunPython.noop),
    ]
