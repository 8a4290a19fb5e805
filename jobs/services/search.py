"""The full-text index: a page's lines as search reads them (``SearchLine``), rewritten whenever the page is.

``page_index`` runs inside the transaction that stores a page (``jobs.services.pages``) or changes its
text (``jobs.services.review``, ``jobs.services.page_edits``), so a committed page is searchable as it
now reads and a rolled-back change leaves the index as it was. Rows go with their page and job
(ON DELETE CASCADE in the ORM, the FTS5 triggers on SQLite). Reads: ``jobs.selectors.search``.
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchVector
from django.db import connection

from jobs.models import PageResult, SearchLine
from jobs.selectors.results import page_with_corrections
from jobs.selectors.search import search_config


def page_index(page: PageResult) -> None:
    """Replace the page's index rows with its lines as the review shows them now (corrections and edits
    applied); a page without a result has none. Call it inside the transaction that changed the page."""
    SearchLine.objects.filter(page=page).delete()
    # Read again: the caller's page may carry corrections and edits prefetched before its change.
    page = PageResult.objects.select_related("job").prefetch_related("corrections", "edits").get(pk=page.pk)
    if page.status != PageResult.Status.SUCCEEDED or not page.normalized:
        return
    current = page_with_corrections(page)
    region_types = {region.id: region.type for region in current.regions}
    config = search_config(page.job.lang)
    SearchLine.objects.bulk_create([
        SearchLine(page=page, job_id=page.job_id, owner_id=page.job.owner_id, page_number=page.page_number,
                   line_id=line.id, position=position, region_type=region_types.get(line.region_id, ""),
                   polygon=line.polygon, text=line.text, confidence=line.confidence, config=config)
        for position, line in enumerate(current.lines) if line.text.strip()
    ])
    if connection.vendor == "postgresql":  # SQLite's FTS5 table was filled by its trigger
        SearchLine.objects.filter(page=page).update(vector=SearchVector("text", config=config))
