"""``python -m ocr_engine FILE ...`` runs OCR; ``python -m ocr_engine models ...`` manages the model pack;
``python -m ocr_engine fields ...`` extracts the fields of a JSON Schema (docs/extraction.md)."""

import sys


def main() -> int:
    if sys.argv[1:2] == ["models"]:
        from .models.cli import main as models_main

        return models_main(sys.argv[2:])
    if sys.argv[1:2] == ["fields"]:
        from .fields.cli import main as fields_main

        return fields_main(sys.argv[2:])
    # Imported lazily: the OCR CLI pulls in the whole engine, the model tools must not need it.
    from .cli import main as ocr_main

    return ocr_main()


if __name__ == "__main__":
    sys.exit(main())
