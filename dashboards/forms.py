"""Filter and benchmark forms (validation only; views stay thin)."""

from __future__ import annotations

from pathlib import Path

from django import forms

from dashboards import conf
from dashboards.models import BenchmarkSet


class FilterForm(forms.Form):
    engagement = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="Engagement")
    date_from = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label="To", widget=forms.DateInput(attrs={"type": "date"}))
    engine = forms.ChoiceField(required=False, label="Engine")
    model = forms.ChoiceField(required=False, label="Model")

    def __init__(self, data, *, engagements, engines, models):
        super().__init__(data, label_suffix="")
        self.fields["engagement"].choices = [("", "All my engagements")] + [
            (e.pk, e.name) for e in engagements
        ]
        self.fields["engine"].choices = [("", "Any engine")] + [(e, e) for e in engines]
        self.fields["model"].choices = [("", "Any model")] + [(m, m) for m in models]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("date_from") and cleaned.get("date_to") and cleaned["date_from"] > cleaned["date_to"]:
            raise forms.ValidationError("The start date is after the end date.")
        return cleaned


ENGINES = [("offline", "offline"), ("anthropic", "anthropic")]


class RunForm(forms.Form):
    benchmark_set = forms.ModelChoiceField(queryset=BenchmarkSet.objects.none(), label="Benchmark set")
    scope = forms.ChoiceField(choices=[("all", "All pairs"), ("absent", "Absent pairs only (silent source)")])
    engine = forms.ChoiceField(choices=ENGINES)
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        label="First N documents",
        help_text="Blank runs every document. A limited run is a quick check: "
        "the dashboard's figures and alerts come from full runs.",
    )
    k = forms.IntegerField(min_value=1, max_value=50, initial=5, label="k (retrieved chunks)")

    def __init__(self, *args, sets, **kwargs):
        super().__init__(*args, label_suffix="", **kwargs)
        self.fields["benchmark_set"].queryset = sets
        self.fields["benchmark_set"].empty_label = None
        self.fields["engine"].initial = conf.get("BENCHMARK_ENGINE")


class ImportSetForm(forms.Form):
    path = forms.CharField(
        max_length=1000,
        label="Corpus folder on the server",
        help_text="A folder in the cuad-dev format (documents.jsonl, gold.jsonl, pdf/).",
    )
    name = forms.CharField(max_length=200, required=False, help_text="Defaults to the folder name.")
    engagement = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        label="Belongs to",
        help_text="Blank: a shared corpus every manager sees.",
    )
    weekly_silent_source = forms.BooleanField(required=False, initial=True, label="Weekly silent-source run")

    def __init__(self, *args, engagements, **kwargs):
        super().__init__(*args, label_suffix="", **kwargs)
        self.fields["engagement"].choices = [("", "Shared (public corpus)")] + [
            (e.pk, e.name) for e in engagements
        ]

    def clean_path(self):
        """Only folders under the configured corpus roots (a form must not read any path on the server)."""
        path = Path(self.cleaned_data["path"]).expanduser()
        roots = conf.corpus_roots()
        candidates = [path] if path.is_absolute() else [root / path for root in roots]
        for candidate in candidates:
            resolved = candidate.resolve()
            if any(resolved == root or root in resolved.parents for root in roots) and resolved.is_dir():
                return resolved
        raise forms.ValidationError(
            "Not a folder under the corpus roots: " + ", ".join(str(r) for r in roots)
        )
