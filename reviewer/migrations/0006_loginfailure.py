from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviewer", "0005_clausetypechange"),
    ]

    operations = [
        migrations.CreateModel(
            name="LoginFailure",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("username", models.CharField(max_length=150)),
                ("address", models.CharField(max_length=64)),
                ("at", models.DateTimeField(db_index=True)),
            ],
            options={
                "indexes": [
                    models.Index(fields=["address", "at"], name="login_failures_of_address"),
                    models.Index(fields=["username", "address", "at"], name="login_failures_of_user"),
                ],
            },
        ),
    ]
