"""Scopes the clause catalog by engagement: an admin's own type belongs to one engagement (built-in and
global types have none), and an engagement retires a type for itself alone (``ClauseTypeRetirement``).
Types added before this migration have no engagement: they stay global, as they were."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("engagements", "0001_initial"),
        ("extraction", "0006_extraction_confidence"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="clausetype",
            name="engagement",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="own_clause_types",
                to="engagements.engagement",
            ),
        ),
        migrations.CreateModel(
            name="ClauseTypeRetirement",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("retired", models.BooleanField()),
                ("at", models.DateTimeField(auto_now_add=True)),
                (
                    "by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "clause_type",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="retirements",
                        to="extraction.clausetype",
                    ),
                ),
                (
                    "engagement",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="clause_retirements",
                        to="engagements.engagement",
                    ),
                ),
            ],
            options={
                "ordering": ["engagement", "clause_type", "-at", "-id"],
                "indexes": [
                    models.Index(fields=["engagement", "clause_type", "-id"], name="retirement_latest")
                ],
            },
        ),
    ]
