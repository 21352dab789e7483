from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("extraction", "0004_citation_chunk_restrict"),
    ]

    operations = [
        migrations.AddField(
            model_name="extraction",
            name="refused_attempts",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
