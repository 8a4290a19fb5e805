"""``python manage.py ocr_reindex``: put every finished page in the search index again (jobs.services.search).

Pages are indexed when they are stored or corrected; this is for pages stored before the index existed
(an upgraded site) and after a change of how pages are indexed. Each page is rewritten in its own
transaction, so the site stays searchable while it runs.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import transaction

from jobs.models import PageResult
from jobs.services.search import page_index


class Command(BaseCommand):
    help = "Index every finished page for search again (pages stored before the search index existed)."

    def handle(self, *args, **options):
        pages = PageResult.objects.filter(status=PageResult.Status.SUCCEEDED).order_by("pk")
        for page in pages.iterator():
            with transaction.atomic():
                page_index(page)
        self.stdout.write(f"Indexed {pages.count()} page(s).")
