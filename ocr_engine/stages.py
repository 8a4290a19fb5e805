"""Names of the timed stages of one page: the keys of ``PageOutput.timings``.

The worker stores these timings with each page and ``jobs.observability.metrics``
sums them into the page latency, so both import the names from here.
"""

RENDER = "render"  # the document page to an image (inputs.Document.render)
TEXT_LAYER = "text_layer"  # a PDF page's own text read as lines, plus OCR of its images (ocr_engine.textlayer)
ORIENTATION = "orientation"  # turning and deskewing the page (ocr_engine.orientation)
OCR = "ocr"  # the pipeline's models on the image
NORMALIZE = "normalize"  # raw pipeline result -> schema.Page
# The worker's page JPEG and thumbnail: what their encoding, done while the page is read, added after it.
STORE_IMAGES = "store_images"

ENGINE_STAGES = (RENDER, TEXT_LAYER, ORIENTATION, OCR, NORMALIZE)
