"""The job page's fields panel in a real browser: a value shows its line on the page, a reviewer corrects a
value and points another at a line, both stored with who and when.

No OCR runs: the invoice page (tests.ocr_engine.fields.hand_invoice) is stored through the worker's
services, and its fields are read by the fields stage's own task (the rules backend), as the ``llm``
cluster would run it.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from jobs.models import FieldCorrection
from jobs.tasks import extract_fields
from tests.e2e.conftest import browser_page
from tests.jobs.fields_jobs import invoice_job, invoice_type

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MARKUP = '<img src="x" id="injected">'


def line_of(page: dict, line_id: str) -> dict:
    return next(line for line in page["normalized"]["lines"] if line["id"] == line_id)


def test_a_fields_value_shows_its_line_and_corrections_are_stored(user, api_client, asgi_server):
    job = invoice_job(user, document_type=invoice_type(user))
    extract_fields(str(job.pk))
    answer = api_client.get(f"/api/v1/jobs/{job.pk}/fields").json()
    assert answer["status"] == "succeeded", answer
    number = answer["fields"]["invoice_number"]
    assert number["grounded"] and [e["line_id"] for e in number["evidence"]] == ["p1-l1"]
    page = api_client.get(f"/api/v1/jobs/{job.pk}/pages/1").json()

    with browser_page(asgi_server, "alice", "pw-alice") as tab:
        tab.goto(f"{asgi_server}/jobs/{job.pk}/?page=1")
        expect(tab.locator("#fields-status")).to_have_text("succeeded")
        expect(tab.locator("#document-type option:checked")).to_have_text("invoice")
        field = tab.locator('#fields-list li.fld[data-name="invoice_number"]')
        expect(field.locator(".fld-value")).to_have_text("INV-2024-001")
        expect(field.locator(".fld-ground")).to_have_text("grounded")

        # A click on the value highlights its line, on the image and in the text panel.
        field.click()
        expect(tab.locator("#overlay polygon.ln.fld")).to_have_count(1)
        expect(tab.locator("#text-panel li.ln.fld")).to_have_count(1)
        expect(tab.locator("#text-panel li.ln.fld .tx")).to_have_text("Invoice No: INV-2024-001")
        marked = tab.locator("#overlay polygon.ln.fld").get_attribute("data-i")
        expect(tab.locator(f'#text-panel li.ln[data-i="{marked}"]')).to_have_class("ln src-ocr fld")

        # A line item's amount: a value inside an array, named by its path.
        amount = tab.locator('#fields-list li.fld[data-name="line_items.1.amount"]')
        expect(amount.locator(".fld-value")).to_have_text("250")
        amount.click()
        expect(tab.locator("#text-panel li.ln.fld .tx")).to_have_text("250,00")

        # Correct the invoice number: Correct, type, Enter.
        field.click()
        field.locator("[data-act=edit]").click()
        tab.locator("input.fld-edit").fill("INV-2024-009")
        tab.keyboard.press("Enter")
        expect(field.locator(".fld-value")).to_have_text("INV-2024-009")
        expect(field).to_have_class("fld corrected active")

        # Point the customer at another line: select it on the page, then "Cite selected line".
        customer = tab.locator('#fields-list li.fld[data-name="customer"]')
        customer.click()
        expect(tab.locator("#text-panel li.ln.fld .tx")).to_have_text("Acme Industries")
        tab.locator("#text-panel li.ln", has_text="Bill to").click()
        customer.locator("[data-act=cite]").click()
        expect(tab.locator("#text-panel li.ln.fld .tx")).to_have_text("Bill to")

        # A value is the document's text, never markup.
        customer.locator("[data-act=edit]").click()
        tab.locator("input.fld-edit").fill(MARKUP)
        tab.keyboard.press("Enter")
        expect(customer.locator(".fld-value")).to_have_text(MARKUP)
        expect(tab.locator("#injected")).to_have_count(0)

    stored = {c.name: c for c in FieldCorrection.objects.filter(job=job).select_related("corrected_by")}
    assert stored["invoice_number"].value == "INV-2024-009"
    assert stored["invoice_number"].corrected_by == user
    assert [e["line_id"] for e in stored["customer"].evidence] == ["p1-l4"]
    assert stored["customer"].value == MARKUP  # and a value alone leaves the evidence
    after = api_client.get(f"/api/v1/jobs/{job.pk}/fields").json()["fields"]
    assert after["invoice_number"]["value"] == "INV-2024-009" and after["invoice_number"]["corrected"]["by"] == "alice"
    assert after["customer"]["evidence"][0]["polygon"] == line_of(page, "p1-l4")["polygon"]


STATEMENT = {"type": "object", "properties": {"subject": {"type": "string", "x-labels": ["Subject"]}}}


def letter_job(owner, document_type):
    """A finished one-page job of a letter's lines (no invoice words), its type named ``document_type``."""
    from jobs import services
    from tests.jobs.factories import JobFactory
    from tests.jobs.fields_jobs import name_type
    from tests.jobs.helpers import page_record

    job = JobFactory(owner=owner, lang="en")
    name_type(job, document_type)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1, texts=(
        "Dear Ms Miller", "Subject: your letter of May", "Kind regards")))
    return services.job_finish(job_id=job.pk, worker_id="w")


def test_a_reviewer_changes_the_document_type_and_the_classifier_learns_it(user, api_client, asgi_server, qcluster):
    from jobs.models import DocumentClassifier, DocumentType, JobFields
    from jobs.services.classification import job_classify
    from jobs.services.classifier import classifier_train
    from jobs.tasks import train_classifiers

    # Types the learned classifier alone tells apart (matching "auto": no rules of their own).
    invoice = invoice_type(user, matching_algorithm="auto")
    statement = DocumentType.objects.create(owner=user, name="statement", matching_algorithm="auto",
                                            fields_schema=STATEMENT)
    invoice_read = invoice_job(user, document_type=invoice)
    letter = letter_job(user, invoice)  # named wrongly at submit
    for job in (invoice_read, letter):
        extract_fields(str(job.pk))
    assert classifier_train(owner_id=user.pk).model is None  # both named invoice: nothing to tell apart
    assert job_classify(job=letter) is None
    qcluster(Q_CLUSTER_NAME="llm")  # the fields stage's own cluster reads the fields again

    with browser_page(asgi_server, "alice", "pw-alice") as tab:
        tab.goto(f"{asgi_server}/jobs/{letter.pk}/?page=1")
        expect(tab.locator("#document-type option:checked")).to_have_text("invoice")
        expect(tab.locator("#document-type-source")).to_contain_text("named by a person")
        tab.locator("#document-type").select_option(label="statement")
        expect(tab.locator("#document-type option:checked")).to_have_text("statement")
        # Read again by the llm cluster's worker with the new type's schema: the panel follows it.
        subject = tab.locator('#fields-list li.fld[data-name="subject"]')
        expect(subject.locator(".fld-value")).to_have_text("your letter of May", timeout=30_000)
        expect(tab.locator("#fields-status")).to_have_text("succeeded")
        subject.click()
        expect(tab.locator("#text-panel li.ln.fld .tx")).to_have_text("Subject: your letter of May")

    stage = JobFields.objects.get(job=letter)
    assert (stage.document_type, stage.type_source, stage.type_confidence) == (statement, "user", 1.0)
    classifier = DocumentClassifier.objects.get(owner=user)
    assert classifier.changed_at > classifier.trained_at  # the change is new training data
    train_classifiers()  # what the schedule runs
    classifier.refresh_from_db()
    assert classifier.model is not None and classifier.documents == 2
    learned = job_classify(job=letter)
    assert (learned.document_type, learned.source) == (statement, "model")
    assert job_classify(job=invoice_read).document_type == invoice
