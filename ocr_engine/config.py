"""Engine configuration: one frozen object, passed explicitly, never read from globals."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import UnsupportedOption

DEFAULT_PIPELINE = "structure"  # one of ``ocr_engine.pipelines.names()``, which check it
DEFAULT_LANG = "en"
BACKENDS = ("onnxruntime", "paddle")
# What runs the ONNX models on the onnxruntime backend: onnxruntime's own CPU kernels, or
# OpenVINO through onnxruntime's OpenVINO execution provider (the ``onnxruntime-openvino``
# build of onnxruntime, installed in its place).
INFERENCES = ("onnxruntime", "openvino")
DEFAULT_SCALE = 2.0  # pypdfium2 scale: 2 x 72 DPI = 144 DPI, enough for 9 pt body text
# Per-page choices a caller can make on any pipeline (API, form, CLI, EngineConfig).
# text_layer: "auto" reads a PDF page's own text layer where it can be trusted and
# OCRs the rest; "ocr" OCRs every page. orientation: "auto" turns and deskews pages
# before OCR; "none" takes pages as they come (callers who pre-process).
TEXT_LAYER_MODES = ("auto", "ocr")
ORIENTATION_MODES = ("auto", "none")
# The EngineConfig fields above: ``Engine.with_options`` changes them on a loaded engine.
PAGE_OPTIONS = ("text_layer", "orientation")

# Languages PP-OCRv6 reads (PaddleOCR 3.7's ``_PPOCRV6_LANGS``): the offline pack's
# multilingual PP-OCRv6 small recogniser covers them all, so ``lang`` does not change
# its models. A test checks this list against PaddleOCR's own.
OFFLINE_LANGUAGES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "nl": "Dutch",
    "it": "Italian", "pt": "Portuguese", "ca": "Catalan", "da": "Danish", "sv": "Swedish",
    "no": "Norwegian", "fi": "Finnish", "is": "Icelandic", "ga": "Irish", "cy": "Welsh",
    "pl": "Polish", "cs": "Czech", "sk": "Slovak", "sl": "Slovenian", "hr": "Croatian",
    "bs": "Bosnian", "rs_latin": "Serbian (Latin)", "ro": "Romanian", "hu": "Hungarian",
    "et": "Estonian", "lv": "Latvian", "lt": "Lithuanian", "tr": "Turkish", "az": "Azerbaijani",
    "uz": "Uzbek", "ku": "Kurdish", "id": "Indonesian", "ms": "Malay", "tl": "Tagalog",
    "sq": "Albanian", "eu": "Basque", "gl": "Galician", "af": "Afrikaans", "la": "Latin",
    "lb": "Luxembourgish", "mt": "Maltese", "oc": "Occitan", "rm": "Romansh", "mi": "Maori",
    "qu": "Quechua", "sw": "Swahili", "vi": "Vietnamese", "ch": "Chinese & English",
    "chinese_cht": "Traditional Chinese", "japan": "Japanese",
}
# Languages PaddleOCR serves with script-specific PP-OCRv5/v3 recognisers that it
# downloads itself: available only where the site may download models.
ONLINE_ONLY_LANGUAGES = {
    "korean": "Korean", "th": "Thai", "el": "Greek", "te": "Telugu", "ta": "Tamil", "ka": "Kannada",
    "ru": "Russian", "uk": "Ukrainian", "be": "Belarusian", "bg": "Bulgarian",
    "rs_cyrillic": "Serbian (Cyrillic)", "mk": "Macedonian", "mn": "Mongolian", "kk": "Kazakh",
    "ky": "Kyrgyz", "tg": "Tajik", "tt": "Tatar", "ar": "Arabic", "fa": "Persian", "ur": "Urdu",
    "ps": "Pashto", "ug": "Uyghur", "sd": "Sindhi", "hi": "Hindi", "mr": "Marathi", "ne": "Nepali",
    "sa": "Sanskrit",
}
LANGUAGES = {**OFFLINE_LANGUAGES, **ONLINE_ONLY_LANGUAGES}


def _default_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@dataclass(frozen=True)
class EngineConfig:
    """Everything that changes what the engine computes or how fast.

    ``models_dir`` points at the offline model pack built by
    ``python -m ocr_engine models build``; when it is ``None`` PaddleOCR uses its
    official model names and downloads them itself (online sites).
    """

    pipeline: str = DEFAULT_PIPELINE
    lang: str = DEFAULT_LANG
    backend: str = "onnxruntime"
    # ``INFERENCES``. OpenVINO read the same text at the same CPU time per page as onnxruntime on
    # an AVX2 CPU, and waited longer for its own thread on busy cores (docs/benchmarks.md).
    inference: str = "onnxruntime"
    device: str = "cpu"  # "cpu", "gpu" or "gpu:N"
    scale: float = DEFAULT_SCALE
    models_dir: Path | None = None
    # Threads for onnxruntime's intra-op pool and OpenMP. One worker process per
    # core scales better than one process with many threads on small pages, so
    # workers pass 1 per process when they run several; the CLI uses all cores.
    cpu_threads: int = field(default_factory=_default_threads)
    # Text detector input: the longer side is capped at this many pixels. PaddleOCR's
    # default ("min" side 64, max 4000) feeds a 300-DPI scan nearly unscaled and the
    # DB detector loses lines.
    det_max_side: int = 2560
    # ... and shrunk further, page by page, until the page's small characters
    # are this many pixels tall (``ocr_engine.detector_scale``): a 200-DPI page
    # is detected at about 0.7 of its size, a 300-DPI scan at half. None: the
    # page as rendered, up to ``det_max_side``.
    det_char_px: int | None = 10
    # Text lines per recognition batch; None: one at a time on CPU, 16 on a GPU.
    # On CPU a batch is padded to its widest line, so batching only adds work, and
    # onnxruntime's arena grows with it (200 DPI, ``ocr``: 1.65 s and 1.7 GB per page
    # at 1 against 2.30 s and 2.65 GB at 16; docs/benchmarks.md).
    rec_batch_size: int | None = None
    # onnxruntime's CPU memory arena keeps the largest buffers a page needed for
    # the next one: fast, but a worker's memory stays at its peak (about 3.8 GB
    # after a dense 200-DPI page with ``ocr``). False returns them after each run:
    # about 2.0 GB, and 25-30 % more time per page (docs/benchmarks.md).
    memory_arena: bool = True
    layout_threshold: float = 0.5
    text_layer: str = "auto"
    # A text-layer page with more characters than this is OCR'd instead (text_layer_rejected
    # "too_many_glyphs"): each character becomes an object with its boxes, so a page drawing a
    # million tiny glyphs would take a worker's memory and minutes. A dense A4 page of 8 pt text
    # holds about 13,000.
    text_layer_max_glyphs: int = 50_000
    orientation: str = "auto"

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise UnsupportedOption(f"Unknown backend {self.backend!r}; choose one of {', '.join(BACKENDS)}.")
        if self.inference not in INFERENCES:
            raise UnsupportedOption(f"Unknown inference {self.inference!r}; choose one of {', '.join(INFERENCES)}.")
        if self.inference == "openvino" and (self.backend != "onnxruntime" or self.device != "cpu"):
            raise UnsupportedOption("inference='openvino' runs on the onnxruntime backend on the CPU.")
        if self.lang not in LANGUAGES:
            raise UnsupportedOption(f"Unsupported language {self.lang!r}; see docs/languages for the list.")
        if self.models_dir is not None and self.lang not in OFFLINE_LANGUAGES:
            raise UnsupportedOption(
                f"Language {self.lang!r} needs PaddleOCR's downloadable models; the offline model pack "
                f"reads: {', '.join(sorted(OFFLINE_LANGUAGES))}."
            )
        if self.text_layer not in TEXT_LAYER_MODES:
            raise UnsupportedOption(
                f"Unknown text_layer {self.text_layer!r}; choose one of {', '.join(TEXT_LAYER_MODES)}.")
        if self.orientation not in ORIENTATION_MODES:
            raise UnsupportedOption(
                f"Unknown orientation {self.orientation!r}; choose one of {', '.join(ORIENTATION_MODES)}.")
        if self.text_layer_max_glyphs < 1:
            raise UnsupportedOption(f"text_layer_max_glyphs {self.text_layer_max_glyphs} must be at least 1.")
        if not 0.5 <= self.scale <= 6:
            raise UnsupportedOption(f"Render scale {self.scale} is out of range (0.5 to 6).")
        if self.det_char_px is not None and not 6 <= self.det_char_px <= 64:
            raise UnsupportedOption(f"det_char_px {self.det_char_px} is out of range (6 to 64, or None).")
        if not (self.device == "cpu" or self.device.startswith("gpu")):
            raise UnsupportedOption(f"Unknown device {self.device!r}; use 'cpu' or 'gpu[:N]'.")

    @property
    def uses_gpu(self) -> bool:
        return self.device.startswith("gpu")

    @property
    def recognition_batch(self) -> int:
        return self.rec_batch_size or (16 if self.uses_gpu else 1)

    def with_(self, **changes) -> "EngineConfig":
        return replace(self, **changes)
