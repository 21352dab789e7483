"""Clause types get an example clause, searched as one more retrieval query; catalog rows get ours."""
from django.db import migrations, models


def fill(apps, schema_editor):
    from extraction.catalog.sync import fill_examples

    fill_examples(apps.get_model("extraction", "ClauseType"))


class Migration(migrations.Migration):
    dependencies = [("extraction", "0002_seed_catalog")]
    operations = [
        migrations.AddField(
            model_name="clausetype", name="example",
            field=models.TextField(blank=True, help_text="A model clause of this type, written in contract language; "
                                                         "searched as one more retrieval query."),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
