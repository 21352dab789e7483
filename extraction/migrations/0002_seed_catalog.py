"""Seed the clause catalog (seed types + CUAD's 41 categories) from extraction/catalog.py."""
from django.db import migrations


def seed(apps, schema_editor):
    from extraction.catalog.sync import ensure_catalog

    ensure_catalog(apps.get_model("extraction", "ClauseType"))


def unseed(apps, schema_editor):
    """Remove the catalog's types that nothing stands on: one a run has extracted or still has a task for
    is kept (its rows protect it), so going back never fails half way."""
    from extraction import catalog

    ClauseType = apps.get_model("extraction", "ClauseType")
    ClauseType.objects.filter(name__in=catalog.names(), source__in=["seed", "cuad"],
                              extractions__isnull=True, clausetask__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("extraction", "0001_initial")]
    operations = [migrations.RunPython(seed, unseed)]
