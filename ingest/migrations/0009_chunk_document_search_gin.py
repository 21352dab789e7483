# A GIN index over (ARRAY[document_id], tsvector): the full-text side of a search restricted to some documents
# reads those documents' entries of each stem instead of the stem's whole posting list
# (docs/decisions.md, chunk_document_search_gin).

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0008_page_ocr"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="chunk",
            index=django.contrib.postgres.indexes.GinIndex(
                models.Func(
                    models.F("document"),
                    output_field=django.contrib.postgres.fields.ArrayField(
                        base_field=models.BigIntegerField(), size=None
                    ),
                    template="ARRAY[%(expressions)s]",
                ),
                models.F("search"),
                name="chunk_document_search_gin",
            ),
        ),
    ]
