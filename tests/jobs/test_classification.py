"""Classification: a document type's rules (Paperless-ngx's algorithms) and job_classify on a job's result."""

from __future__ import annotations

import pytest

from jobs import services
from jobs.models import DocumentType
from jobs.services.classification import job_classify
from jobs.services.matching import InvalidMatch, check_match, match_words, rules_hold
from tests.jobs.factories import JobFactory
from tests.jobs.helpers import page_record

Matching = DocumentType.Matching


def finished_job(owner, *texts: str):
    """A succeeded one-page job whose lines are ``texts``."""
    job = JobFactory(owner=owner)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1, texts=texts))
    return services.job_finish(job_id=job.pk, worker_id="w")


def kind(match: str, algorithm: str, name: str = "t") -> DocumentType:
    return DocumentType(name=name, match=match, matching_algorithm=algorithm)


def test_words_split_on_spaces_and_quotes_group():
    assert match_words('  some  words "with   quotes " x.y') == ["some", "words", r"with\s+quotes", r"x\.y"]


@pytest.mark.parametrize(("match", "algorithm", "text", "holds"), [
    ("invoice rechnung facture", Matching.ANY, "RECHNUNG Nr. 17", True),
    ("invoice rechnung facture", Matching.ANY, "Invoiced amounts", False),  # whole words only
    ("invoice total", Matching.ALL, "Invoice ... Total: 12.00", True),
    ("invoice total", Matching.ALL, "Invoice without a sum", False),
    ('"purchase order"', Matching.ANY, "PURCHASE\n  ORDER 4711", True),
    ("Amount due", Matching.LITERAL, "the amount due is", True),
    ("Amount due", Matching.LITERAL, "amount that is due", False),
    (r"INV-\d{4}", Matching.REGEX, "Ref inv-2024", True),
    (r"INV-\d{4}", Matching.REGEX, "Ref INV-20", False),
    ("Bahnhofstrasse", Matching.FUZZY, "Bahnhofstrase 12, Zürich", True),
    ("Bahnhofstrasse", Matching.FUZZY, "Hauptplatz 1, Wien", False),
    ("invoice", Matching.AUTO, "invoice", False),  # auto types are the learned classifier's
])
def test_rules_hold_as_paperless_matches(match, algorithm, text, holds):
    assert rules_hold(kind(match, algorithm), text) is holds


def test_a_catastrophic_regex_is_stopped_and_counts_as_no_match():
    assert rules_hold(kind(r"(a+)+$", Matching.REGEX), "a" * 40 + "!") is False


@pytest.mark.parametrize(("match", "algorithm"), [("(unclosed", Matching.REGEX), ("  ", Matching.ANY)])
def test_rules_that_cannot_run_are_refused(match, algorithm):
    with pytest.raises(InvalidMatch) as caught:
        check_match(match, algorithm)
    assert caught.value.code == "invalid_match"


def test_job_classify_picks_the_type_whose_rules_hold(user, other_user):
    DocumentType.objects.create(owner=user, name="invoice", match="invoice rechnung", matching_algorithm="any")
    receipt = DocumentType.objects.create(owner=user, name="receipt", match="receipt kassenbon")
    DocumentType.objects.create(owner=other_user, name="bob's", match="receipt")
    classification = job_classify(job=finished_job(user, "Kassenbon", "Summe 4,20"))
    assert (classification.document_type, classification.source, classification.confidence) == (
        receipt, "rules", 1.0)


def test_two_types_matching_alike_are_not_confident(user):
    DocumentType.objects.create(owner=user, name="invoice", match="invoice")
    DocumentType.objects.create(owner=user, name="order", match="order")
    classification = job_classify(job=finished_job(user, "Invoice for order 12"))
    assert (classification.document_type.name, classification.confidence) == ("invoice", 0.5)


def test_no_type_fits_or_none_defined(user):
    assert job_classify(job=finished_job(user, "Dear Sir")) is None
    DocumentType.objects.create(owner=user, name="invoice", match="invoice")
    assert job_classify(job=finished_job(user, "Dear Sir")) is None


def test_job_classify_reads_reviewers_corrections(user):
    from jobs.services.review import line_correct

    DocumentType.objects.create(owner=user, name="invoice", match="invoice")
    job = finished_job(user, "Inv0ice 17")
    assert job_classify(job=job) is None
    line_correct(page=job.pages.get(), line_id="p1-l1", text="Invoice 17", user=user)
    assert job_classify(job=job).document_type.name == "invoice"


INVOICES = [("Invoice", "Bill to ACME Ltd", "Unit price Quantity", "Amount due 120.00"),
            ("Tax invoice", "Customer Globex", "Quantity Unit price", "Subtotal 50.00", "Amount due 60.00"),
            ("Invoice 2231", "Bill to Initech", "Payment terms 30 days", "Amount due 75.10")]
RECEIPTS = [("Corner Shop", "Cash 20.00", "Change 3.50", "Thank you for shopping"),
            ("Bakery Lux", "Card payment", "Change 0.00", "Thank you, come again"),
            ("Kiosk 7", "Cash 5.00", "Thank you for your visit")]


def labelled(owner, document_type, *texts):
    from jobs.models import JobFields

    job = finished_job(owner, *texts)
    JobFields.objects.update_or_create(job=job, defaults={"document_type": document_type, "type_source": "user",
                                                          "type_confidence": 1.0})
    return job


@pytest.fixture
def learned(user):
    """Two types with no rules (``auto``), three jobs of each whose type the user named, trained."""
    from jobs.services.classifier import classifier_train

    invoice = DocumentType.objects.create(owner=user, name="invoice", matching_algorithm="auto")
    receipt = DocumentType.objects.create(owner=user, name="receipt", matching_algorithm="auto")
    for texts in INVOICES:
        labelled(user, invoice, *texts)
    for texts in RECEIPTS:
        labelled(user, receipt, *texts)
    classifier_train(owner_id=user.pk)
    return invoice, receipt


def test_the_learned_classifier_types_what_no_rule_names(user, other_user, learned):
    invoice, receipt = learned
    job = finished_job(user, "Bill to Hooli", "Amount due 99.00", "Unit price")
    classification = job_classify(job=job)
    assert (classification.document_type, classification.source) == (invoice, "model")
    assert 0.5 <= classification.confidence <= 1
    assert job_classify(job=finished_job(user, "Cash 10.00", "Thank you")).document_type == receipt
    # bob has learned nothing: his documents are not classified by alice's model
    DocumentType.objects.create(owner=other_user, name="invoice", matching_algorithm="auto")
    assert job_classify(job=finished_job(other_user, "Bill to Hooli", "Amount due 99.00")) is None


def test_confident_rules_come_before_the_model(user, learned):
    DocumentType.objects.create(owner=user, name="order", match="Hooli")
    classification = job_classify(job=finished_job(user, "Bill to Hooli", "Amount due 99.00"))
    assert (classification.document_type.name, classification.source) == ("order", "rules")


def test_a_deleted_type_is_not_predicted(user, learned):
    from jobs.services.document_types import document_type_delete

    document_type_delete(document_type=learned[0])
    classification = job_classify(job=finished_job(user, "Bill to Hooli", "Amount due 99.00", "Unit price"))
    assert classification is None or classification.document_type == learned[1]


def test_the_schedule_retrains_only_owners_whose_data_changed(user, learned):
    from jobs.models import DocumentClassifier
    from jobs.services.classifier import classifier_mark_stale, classifiers_train_stale

    assert classifiers_train_stale() == []
    before = DocumentClassifier.objects.get(owner=user)
    labelled(user, learned[1], "Market stall", "Cash 2.00", "Thank you")
    classifier_mark_stale(owner_id=user.pk)
    assert classifiers_train_stale() == [user.pk]
    after = DocumentClassifier.objects.get(owner=user)
    assert (before.documents, after.documents) == (6, 7)
    assert after.data_key != before.data_key and classifiers_train_stale() == []


def test_one_type_is_too_little_to_learn(user):
    from jobs.services.classifier import classifier_train

    invoice = DocumentType.objects.create(owner=user, name="invoice", matching_algorithm="auto")
    labelled(user, invoice, *INVOICES[0])
    assert classifier_train(owner_id=user.pk).model is None
    assert job_classify(job=finished_job(user, *INVOICES[1])) is None


def test_a_schedule_runs_the_training_task(user, learned):
    from django_q.models import Schedule

    from jobs import tasks
    from jobs.services.classifier import classifier_mark_stale

    schedule = Schedule.objects.get(name="jobs.train_classifiers")
    assert (schedule.func, schedule.repeats) == ("jobs.tasks.train_classifiers", -1)
    classifier_mark_stale(owner_id=user.pk)
    assert tasks.train_classifiers() == 1


def test_the_llm_is_asked_only_when_neither_rules_nor_model_are_confident(user, llm_settings):
    """Against the real llama.cpp server (SmolLM2): the answer is one of the user's type names or none."""
    DocumentType.objects.create(owner=user, name="invoice", match="invoice")
    DocumentType.objects.create(owner=user, name="order", match="order")
    DocumentType.objects.create(owner=user, name="letter", matching_algorithm="auto")
    assert job_classify(job=finished_job(user, "Invoice 17", "Amount due 12.00")).source == "rules"  # no LLM
    ambiguous = job_classify(job=finished_job(user, "Invoice for your order 12", "Amount due 12.00"))
    assert ambiguous is not None
    assert ambiguous.document_type.name in {"invoice", "order", "letter"}
    assert (ambiguous.source, ambiguous.confidence) in {("llm", 0.5), ("rules", 0.5)}  # rules: the LLM said none


def test_an_llm_that_is_down_leaves_the_earlier_answer(user, settings):
    from tests.llm_server import free_port

    settings.OCR_LLM_URL, settings.OCR_LLM_ATTEMPTS = f"http://127.0.0.1:{free_port()}/v1", 1
    DocumentType.objects.create(owner=user, name="invoice", match="invoice")
    DocumentType.objects.create(owner=user, name="order", match="order")
    classification = job_classify(job=finished_job(user, "Invoice for your order 12"))
    assert (classification.document_type.name, classification.source, classification.confidence) == (
        "invoice", "rules", 0.5)
    assert job_classify(job=finished_job(user, "Dear Sir")) is None
