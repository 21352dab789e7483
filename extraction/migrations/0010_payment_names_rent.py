"""The built-in Payment type names rent (a lease's rent is its payment clause). A row that still holds an
earlier built-in wording takes the new one; a row an admin edited keeps the admin's words."""

from django.db import migrations

DESCRIPTION = (
    "The money terms: what is paid, by whom, how much, when and how - fees, rent, prices, invoicing, due "
    "dates, currency, late-payment interest, taxes and expense reimbursement."
)
QUERY = (
    "shall pay a fee rent price amount per month payable invoice payment due within days of receipt currency "
    "taxes reimbursement of expenses"
)
EARLIER_DESCRIPTIONS = (
    "The money terms: what is paid, by whom, how much, when and how - fees, prices, invoicing, due dates, "
    "currency, late-payment interest, taxes and expense reimbursement.",
)
EARLIER_QUERIES = (
    "fees payable invoice payment due within days of receipt price amount currency late payment interest "
    "taxes reimbursement of expenses",
    "shall pay a fee price amount per month payable invoice payment due within days of receipt currency "
    "taxes reimbursement of expenses",
)


def name_rent(apps, schema_editor):
    rows = apps.get_model("extraction", "ClauseType").objects.filter(name="Payment", engagement=None)
    rows.filter(description__in=EARLIER_DESCRIPTIONS).update(description=DESCRIPTION)
    rows.filter(query__in=EARLIER_QUERIES).update(query=QUERY)


class Migration(migrations.Migration):
    dependencies = [("extraction", "0009_clause_type_name_per_engagement")]
    operations = [migrations.RunPython(name_rent, migrations.RunPython.noop)]
