"""Forms of the reviewer pages (validation only; the decisions core has the rules)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from engagements.models import Engagement, Role
from extraction.catalog import QUESTION_PREFIX, is_built_in, scope
from extraction.models import ClauseType
from reviewer.decisions import POSTED_DECISIONS


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[(d, d) for d in POSTED_DECISIONS])
    reason = forms.CharField(required=False, max_length=4000)
    corrected_text = forms.CharField(required=False, max_length=50000)
    seen_review = forms.IntegerField(min_value=0)  # id of the latest review the reviewer saw (0: none)
    seen_version = forms.IntegerField(min_value=1)  # the extraction version the reviewer saw
    # "citation" / "page" (what was being read) are read by the view whether the form is valid or not


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data, initial=None):
        files = data if isinstance(data, (list, tuple)) else [data]
        files = [f for f in files if f]
        if not files and self.required:
            raise forms.ValidationError("Choose at least one file.")
        return files


class UploadForm(forms.Form):
    # ignore: the stub types BaseForm.files (the uploads); the metaclass moves a declared field to base_fields
    files = MultipleFileField(label="Contracts", required=False)  # type: ignore[assignment]
    urls = forms.CharField(
        label="Contract URLs",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One http or https URL a line; each is fetched by the server, then processed like a file.",
    )
    doc_type = forms.CharField(label="Document type", required=False, max_length=100)
    extract = forms.BooleanField(
        label="Extract clauses when each contract is ready", required=False, initial=True
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["files"].widget.attrs.update(multiple=True, id="upload-files")
        self.fields["doc_type"].widget.attrs.update(
            {"list": "doc-types", "placeholder": "e.g. Distributor", "aria-describedby": "doc-type-help"}
        )
        self.max_bytes = settings.MAX_UPLOAD_BYTES
        self.fields["urls"].widget.attrs.update(
            {"id": "upload-urls", "placeholder": "https://…", "aria-describedby": "upload-urls-help"}
        )

    def clean_urls(self) -> list[str]:
        """The URLs, one a line, each once (each is checked, and refused or fetched, on its own)."""
        urls = list(dict.fromkeys(line.strip() for line in self.cleaned_data["urls"].splitlines()))
        urls = [url for url in urls if url]
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        if len(urls) > limit:
            raise forms.ValidationError(f"At most {limit} URLs at once (these are {len(urls)}).")
        return urls

    def clean(self):
        data = super().clean()
        if not self.errors and not data.get("files") and not data.get("urls"):
            raise forms.ValidationError("Choose at least one file or paste a URL.")
        return data


class FindForm(forms.Form):
    clause_type = forms.ModelChoiceField(
        queryset=ClauseType.objects.none(),  # the engagement's active types, set in __init__
        required=False,
        empty_label="— a catalog clause type —",
    )
    question = forms.CharField(
        required=False,
        max_length=1000,
        error_messages={
            "max_length": "A question has at most %(limit_value)s characters (this one has %(show_value)s)."
        },
    )

    def __init__(self, *args, engagement, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["clause_type"].queryset = scope.active_types(engagement).order_by("name")

    def clean(self):
        data = super().clean()
        if self.errors:  # a field's own error says what is wrong ("A question has at most ...")
            return data
        if not data.get("clause_type") and not (data.get("question") or "").strip():
            raise forms.ValidationError("Pick a clause type or type a question.")
        if data.get("clause_type") and (data.get("question") or "").strip():
            raise forms.ValidationError("Pick a clause type or type a question, not both.")
        return data


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    # auditor unless chosen otherwise: a name typed and Enter pressed must not hand out admin rights
    role = forms.ChoiceField(choices=Role.choices, initial=Role.AUDITOR)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise forms.ValidationError(f"No user named “{name}”. Create the account first.")
        self.user = user
        return name


class RoleForm(forms.Form):
    membership = forms.IntegerField()
    role = forms.ChoiceField(choices=Role.choices, required=False)
    remove = forms.BooleanField(required=False)


class ClauseTypeForm(forms.ModelForm):
    """A new type of the catalog (an admin's own: source custom)."""

    kind = forms.ChoiceField(
        choices=[("text", "text (a clause)"), ("value", "value (a date, amount, name…)")]
    )

    class Meta:
        model = ClauseType
        fields = ["name", "description", "query", "kind"]
        labels = {"query": "Retrieval query"}
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "query": forms.Textarea(attrs={"rows": 2}),
        }

    def clean_name(self):
        name = self.cleaned_data["name"]
        if name.startswith(QUESTION_PREFIX):
            raise forms.ValidationError(
                f"A name starting with “{QUESTION_PREFIX.strip()}” is kept for free "
                "questions asked on a document; choose another name."
            )
        return name


class ClauseTypeEditForm(ClauseTypeForm):
    """An edit of a catalog type. A built-in type keeps its exact name: evaluation, the offline engine's
    rules and calibration and the skill guides know it by that name."""

    class Meta(ClauseTypeForm.Meta):
        fields = ["name", "description", "query", "example", "kind"]
        widgets = {**ClauseTypeForm.Meta.widgets, "example": forms.Textarea(attrs={"rows": 4})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if is_built_in(self.instance):
            self.fields["name"].disabled = True
            self.fields["name"].help_text = "A built-in type keeps its exact name."


class RetireForm(forms.Form):
    """Retiring a catalog type asks for an explicit yes: new runs leave the type out from then on."""

    confirm = forms.BooleanField(
        required=True,
        label="Yes, retire this type",
        error_messages={"required": "Tick “Yes, retire this type” to retire it."},
    )


class EngagementForm(forms.ModelForm):
    """A new engagement: its name (unique) and client; its creator becomes its first admin."""

    class Meta:
        model = Engagement
        fields = ["name", "client"]


class InviteForm(forms.Form):
    """Someone without an account yet: the account is made without a password, and a one-time link lets
    them choose theirs."""

    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.AUDITOR)

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        if get_user_model().objects.filter(username__iexact=name).exists():
            raise forms.ValidationError(f"“{name}” has an account already: add them by username.")
        field = get_user_model()._meta.get_field("username")
        for validator in field.validators:
            validator(name)
        return name
