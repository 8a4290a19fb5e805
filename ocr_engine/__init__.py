"""ocr_engine: PDF/image in, raw PaddleOCR output and a normalized, versioned result out.

Plain Python, no Django. See README.md and docs/result-schema.md.
"""

__version__ = "0.1.0"
