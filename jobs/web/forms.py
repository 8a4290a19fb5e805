"""Upload form: shapes and choices only; ``job_create`` checks meaning and raises typed errors."""

from __future__ import annotations

from django import forms
from django.conf import settings

from jobs.engine_pool import available_languages
from jobs.models import Job
from jobs.services.submission import DEFAULT_LANG, DEFAULT_PIPELINE

# Where an OcrError from job_create is shown: next to the option it is about;
# any other code belongs to the file that caused it.
FIELD_BY_CODE = {"invalid_page_range": "pages", "page_out_of_range": "pages", "gpu_required": "pipeline"}


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented recipe)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".pdf,.png,.jpg,.jpeg,.tif,.tiff,.bmp,.webp"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)) and data:
            return [single(item, initial) for item in data]
        return [single(data or None, initial)]  # no file: the "required" error


def pipeline_choices() -> list[tuple[str, str]]:
    return [
        (value, label if value != Job.Pipeline.VL or settings.OCR_GPU_CLUSTER else f"{label}: needs a GPU cluster")
        for value, label in Job.Pipeline.choices
    ]


def language_choices() -> list[tuple[str, str]]:
    languages = available_languages()
    return sorted(languages.items(), key=lambda item: (item[0] != DEFAULT_LANG, item[1]))


class UploadForm(forms.Form):
    files = MultipleFileField(label="Files", help_text="PDF, PNG, JPEG, TIFF, BMP or WebP; several at once.")
    pipeline = forms.ChoiceField(initial=DEFAULT_PIPELINE)
    lang = forms.ChoiceField(label="Language", initial=DEFAULT_LANG)
    pages = forms.CharField(
        label="Pages", required=False, max_length=255,
        help_text="All pages when empty; e.g. 1-3,7",
        widget=forms.TextInput(attrs={"placeholder": "all", "inputmode": "numeric", "autocomplete": "off"}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pipeline"].choices = pipeline_choices()
        self.fields["lang"].choices = language_choices()

    def options(self) -> dict[str, str]:
        return {name: self.cleaned_data[name] for name in ("pipeline", "lang", "pages")}
