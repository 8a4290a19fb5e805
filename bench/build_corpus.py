"""Rebuild the real-page corpus (``tests/ocr_engine/data/corpus``) from Debian documentation PDFs.

    apt-get download r-doc-pdf debian-reference-fr debian-reference-es maint-guide-fr \
        debian-faq-nl debian-edu-doc-nl texlive-publishers-doc libtasn1-doc why3-doc-pdf \
        auto-multiple-choice-doc-pdf
    for f in *.deb; do dpkg -x "$f" x; done
    .venv/bin/python bench/build_corpus.py x          # x: where the packages were unpacked
    .venv/bin/python bench/build_corpus.py x debfaq-nl-46   # only these pages (the manifest lists all)

Each page is rendered at 144 DPI (scale 2), reduced to 16 grey levels (small PNGs, the same
pixels for every reader), and stored with the PDF page's own text layer (pypdfium2) as its
ground truth. ``manifest.json`` lists page, language, source and the failure class it stands for.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pypdfium2
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "ocr_engine" / "data" / "corpus"

# (name, language, PDF path under the unpack root or absolute, 1-based page, what it stands for)
PAGES = [
    ("debref-fr-79", "fr", "usr/share/debian-reference/debian-reference.fr.pdf", 79, "ruled tables with notes boxes"),
    ("debref-fr-159", "fr", "usr/share/debian-reference/debian-reference.fr.pdf", 159, "prose, boxed notes, code"),
    ("debref-es-82", "es", "usr/share/debian-reference/debian-reference.es.pdf", 82, "two dense ruled tables"),
    ("debref-es-143", "es", "usr/share/debian-reference/debian-reference.es.pdf", 143, "icon boxes, table, code"),
    ("maint-fr-17", "fr", "usr/share/doc/maint-guide-fr/maint-guide.fr.pdf", 17, "prose, code, footnotes"),
    ("rintro-39", "en", "usr/share/R/doc/manual/R-intro.pdf", 39, "boxed monospace data frame"),
    ("rintro-43", "en", "usr/share/R/doc/manual/R-intro.pdf", 43, "program output, stem-and-leaf plot"),
    ("rexts-120", "en", "usr/share/R/doc/manual/R-exts.pdf", 120, "monospace profiler tables"),
    ("libtasn1-5", "en", "usr/share/doc/libtasn1-doc/libtasn1.pdf", 5, "manual, code listing"),
    ("libtasn1-13", "en", "usr/share/doc/libtasn1-doc/libtasn1.pdf", 13, "manual, API reference"),
    ("shared-mime-info-4", "en", "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf", 4, "spec, lists"),
    ("shared-mime-info-9", "en", "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf", 9, "spec, table"),
    ("debfaq-nl-46", "nl", "usr/share/doc/debian/FAQ/debian-faq.nl.pdf.gz", 46, "Dutch prose, code, command boxes"),
    ("edu-nl-74", "nl", "usr/share/doc/debian-edu-doc-nl/debian-edu-bookworm-manual.pdf", 74,
     "Dutch manual, icon note, inline code"),
    ("acm-sigconf-3", "en", "usr/share/doc/texlive-doc/latex/acmart/samples/sample-sigconf.pdf", 3,
     "two-column article, table in a column, lists"),
    ("acm-sigconf-4", "en", "usr/share/doc/texlive-doc/latex/acmart/samples/sample-sigconf.pdf", 4,
     "two-column article, photo with caption, table"),
    ("maint-fr-20", "fr", "usr/share/doc/maint-guide-fr/maint-guide.fr.pdf", 20,
     "framed code listings between paragraphs"),
    ("aps-5", "en", "usr/share/doc/texlive-doc/latex/revtex4-1/sample/aps/apssamp.pdf", 5,
     "two-column article under a full-width table"),
    ("aps-6", "en", "usr/share/doc/texlive-doc/latex/revtex4-1/sample/aps/apssamp.pdf", 6,
     "two-column article, tables in the columns"),
    ("rexts-20", "en", "usr/share/R/doc/manual/R-exts.pdf", 20, "dense manual page, footnotes"),
    ("rexts-60", "en", "usr/share/R/doc/manual/R-exts.pdf", 60, "dense manual page, code between paragraphs"),
    ("why3-38", "en", "usr/share/doc/why3-doc-pdf/manual.pdf", 38, "paragraphs between framed OCaml listings"),
    ("why3-39", "en", "usr/share/doc/why3-doc-pdf/manual.pdf", 39, "framed listings and program output, prose"),
    ("amc-en-28", "en", "usr/share/doc/auto-multiple-choice/auto-multiple-choice.en.pdf", 28,
     "numbered LaTeX listing (a gutter of line numbers), callout notes"),
]


def pdf_path(unpacked: Path, pdf: str) -> Path:
    """One of ``PAGES``' PDFs: under ``unpacked`` unless its path is absolute."""
    return Path(pdf) if pdf.startswith("/") else unpacked / pdf


def open_pdf(path: Path) -> pypdfium2.PdfDocument:
    # Debian compresses some of its PDFs.
    return pypdfium2.PdfDocument(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path)


def render(page: pypdfium2.PdfPage, scale: float = 2) -> Image.Image:
    """The page at ``scale`` × 72 DPI in 16 grey levels: small PNGs, the same pixels for every reader."""
    return page.render(scale=scale).to_pil().convert("L").quantize(16)


def page_text(page: pypdfium2.PdfPage) -> str:
    """The PDF page's own text layer: the ground truth."""
    return page.get_textpage().get_text_range().replace("\r", "").replace("\ufffe", "")


def build(unpacked: Path, only: set[str]) -> None:
    CORPUS.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, lang, pdf, number, what in PAGES:
        path = pdf_path(unpacked, pdf)
        manifest.append({"name": name, "lang": lang, "source": f"{path.name.removesuffix('.gz')} page {number}",
                         "class": what})
        if only and name not in only:
            continue
        page = open_pdf(path)[number - 1]
        render(page).save(CORPUS / f"{name}.png", optimize=True)
        (CORPUS / f"{name}.txt").write_text(page_text(page), encoding="utf-8")
    (CORPUS / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/"), set(sys.argv[2:]))
