"""Fixed SQL: an insert prepared ahead of its transaction writes the row ``save()`` writes."""

from __future__ import annotations

import pytest
from django.db import transaction

from jobs.models import Document, Job
from jobs.sql import PreparedInsert
from tests.jobs.factories import DocumentFactory, JobFactory

pytestmark = pytest.mark.django_db


def stored_row(model, pk) -> dict:
    row = model.objects.values().get(pk=pk)
    return {column: value for column, value in row.items() if column not in ("id", "created_at")}


def unsaved_copy(saved):
    """A new, unsaved object with ``saved``'s values (a key of its own, no creation time yet)."""
    model = type(saved)
    return model(**{field.attname: getattr(saved, field.attname) for field in model._meta.concrete_fields
                    if not field.primary_key and field.name != "created_at"})


def test_a_document_gets_its_key_from_the_insert_and_the_same_row():
    saved = DocumentFactory()
    copy = unsaved_copy(saved)
    insert = PreparedInsert(copy, late=("created_at",))
    with transaction.atomic():
        insert.execute()
    assert copy.pk is not None and copy.pk != saved.pk and not copy._state.adding
    assert stored_row(Document, copy.pk) == stored_row(Document, saved.pk)
    assert Document.objects.get(pk=copy.pk).created_at == copy.created_at > saved.created_at


def test_a_job_reads_its_late_fields_when_inserted():
    saved = JobFactory(page_numbers=[1], timings={"ocr": 0.5}, webhook_url="https://example.com/hook")
    other_document = DocumentFactory(owner=saved.owner)
    copy = unsaved_copy(saved)
    copy.dedup_key = "f" * 64
    insert = PreparedInsert(copy, late=("document", "webhook_url", "created_at"))
    copy.document, copy.webhook_url = other_document, ""  # after preparing: read at execute
    copy.lang = "de"  # not late: the prepared value stays
    with transaction.atomic():
        insert.execute()
    row = stored_row(Job, copy.pk)
    assert row.pop("document_id") == other_document.pk and row.pop("webhook_url") == ""
    expected = stored_row(Job, saved.pk)
    expected.pop("document_id"), expected.pop("webhook_url")
    assert row == {**expected, "dedup_key": "f" * 64}
    assert Job.objects.get(pk=copy.pk).created_at == copy.created_at


def test_a_rolled_back_insert_leaves_nothing():
    copy = unsaved_copy(DocumentFactory())
    insert = PreparedInsert(copy)
    before = Document.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():
        insert.execute()
        raise RuntimeError("the rest of the transaction failed")
    assert Document.objects.count() == before
