"""The "Bulk extract" form: clause types (required), documents (optional: all ready ones), engine."""

from __future__ import annotations

from django import forms

from extraction.catalog import scope
from extraction.models import ClauseType
from ingest.models import Document

ENGINES = [
    ("auto", "Automatic (Claude through the Message Batches API when a key is set, else offline)"),
    ("anthropic", "Claude, Message Batches API (half price, results within 24 h)"),
    ("offline", "Offline engine on the workers"),
]


class BulkExtractForm(forms.Form):
    clause_types = forms.ModelMultipleChoiceField(
        queryset=ClauseType.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="Every active type is ticked; untick those not needed.",
    )
    documents = forms.ModelMultipleChoiceField(
        queryset=Document.objects.none(),
        required=False,
        widget=forms.SelectMultiple(attrs={"size": 12}),
        help_text="Leave empty for every ready document.",
    )
    engine = forms.ChoiceField(choices=ENGINES, initial="auto")

    def __init__(self, *args, engagement, **kwargs):
        super().__init__(*args, **kwargs)
        types = scope.active_types(engagement).order_by("name")
        self.fields["clause_types"].queryset = types
        self.fields["clause_types"].initial = list(types)
        self.fields["documents"].queryset = (
            engagement.documents.filter(status=Document.Status.READY).defer("text").order_by("title", "id")
        )
