"""Upload form: shapes and choices only; ``job_create`` checks meaning and raises typed errors."""

from __future__ import annotations

from django import forms
from django.conf import settings

from jobs.engines.config import available_languages
from ocr_engine import pipelines
from ocr_engine.config import DEFAULT_LANG
from ocr_engine.config import DEFAULT_PIPELINE

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
    return sorted(languages.items(), key=lambda item: (item[0] != DEFAULT_LANG, item[1]))


class UploadForm(forms.Form):
    files = MultipleFileField(label="Files")
    pipeline = forms.ChoiceField(initial=DEFAULT_PIPELINE)
    lang = forms.ChoiceField(label="Language", initial=DEFAULT_LANG)
    text_layer = forms.ChoiceField(
        label="PDF text", initial="auto", required=False, choices=[("auto", "Use the PDF's own text where it has one"),
                                                   ("ocr", "OCR every page")])
    orientation = forms.ChoiceField(
        label="Orientation", initial="auto", required=False, choices=[("auto", "Turn and deskew pages"),
                                                      ("none", "Pages are upright")])
    pages = forms.CharField(
        label="Pages", required=False, max_length=255,
        help_text="All pages when empty; e.g. 1-3,7",
        widget=forms.TextInput(attrs={"placeholder": "all", "inputmode": "numeric", "autocomplete": "off"}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
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

    def options(self) -> dict[str, str]:
        # Optional choices left out of a post (older clients, scripts) take their initial value.
        return {name: self.cleaned_data[name] or self.fields[name].initial or ""
                for name in ("pipeline", "lang", "text_layer", "orientation", "pages")}
