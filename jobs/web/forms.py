"""Upload form: shapes and choices only; ``job_create`` checks meaning and raises typed errors."""

from __future__ import annotations

from django import forms
from django.conf import settings

from jobs.engines.config import available_languages
from jobs.models import DocumentType
from jobs.options import JobOptions
from ocr_engine import pipelines

DEFAULTS = JobOptions()


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".pdf,.png,.jpg,.jpeg,.tif,.tiff,.bmp,.webp,.zip"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)) and data:
            return [single(item, initial) for item in data]
        return [single(data or None, initial)]  # no file: the "required" error


def pipeline_choices() -> list[tuple[str, str]]:
    return [
        (p.name, p.label if not p.needs_gpu or settings.OCR_GPU_CLUSTER else f"{p.label}: needs a GPU cluster")
        for p in pipelines.all()
    ]


def language_choices() -> list[tuple[str, str]]:
    languages = available_languages()
    return sorted(languages.items(), key=lambda item: (item[0] != DEFAULTS.lang, item[1]))


class UploadForm(forms.Form):
    """The files and every job option (``JobOptions``); an option left out of a post takes its default."""

    files = MultipleFileField(label="Files")
    pipeline = forms.ChoiceField(initial=DEFAULTS.pipeline, required=False)
    lang = forms.ChoiceField(label="Language", initial=DEFAULTS.lang, required=False)
    text_layer = forms.ChoiceField(
        label="PDF text", initial=DEFAULTS.text_layer, required=False,
        choices=[("auto", "Use the PDF's own text where it has one"), ("ocr", "OCR every page")])
    orientation = forms.ChoiceField(
        label="Orientation", initial=DEFAULTS.orientation, required=False,
        choices=[("auto", "Turn and deskew pages"), ("none", "Pages are upright")])
    pages = forms.CharField(
        label="Pages", required=False, max_length=255,
        help_text="All pages when empty; e.g. 1-3,7",
        widget=forms.TextInput(attrs={"placeholder": "all", "inputmode": "numeric", "autocomplete": "off"}),
    )
    webhook_url = forms.URLField(
        label="Webhook URL", required=False, max_length=2000, assume_scheme="https",
        help_text="Told when each job ends; your default webhook when empty.",
        widget=forms.URLInput(attrs={"placeholder": "your default", "autocomplete": "off"}),
    )
    document_type = forms.ChoiceField(
        label="Document type", initial=DEFAULTS.document_type, required=False,
        help_text="Which fields to read; classified from the text when left automatic.")

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        types = DocumentType.objects.filter(owner=owner).order_by("name") if owner is not None else []
        self.fields["document_type"].choices = [("", "Classify automatically"),
                                                *((t.name, t.name) for t in types)]
        self.fields["pipeline"].choices = pipeline_choices()
        self.fields["lang"].choices = language_choices()
        self.fields["files"].help_text = (f"PDF, PNG, JPEG, TIFF, BMP or WebP; up to {settings.OCR_UPLOAD_MAX_FILES} "
                                          "at once; a ZIP of them becomes a batch.")

    def clean_files(self):
        files = self.cleaned_data["files"]
        if len(files) > settings.OCR_UPLOAD_MAX_FILES:
            raise forms.ValidationError(f"At most {settings.OCR_UPLOAD_MAX_FILES} files at once; these are "
                                        f"{len(files)}. Upload the others in another go.")
        return files

    def options(self) -> JobOptions:
        return JobOptions.of(self.cleaned_data)
