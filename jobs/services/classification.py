"""Classification: which of its owner's document types a job's document is (docs/extraction.md).

Cheap first, as Paperless-ngx and the field's pipelines do: the types' rules (``jobs.services.matching``)
on the job's result text; when they are not confident, the classifier learned from the owner's own
classified documents (``jobs.services.classifier``). ``job_classify`` decides and stores nothing: the
fields stage (``jobs.services.extraction``) stores its answer on the job's ``JobFields``.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobs.models import DocumentType, Job, JobFields
from jobs.selectors.results import job_document_result
from jobs.services.classifier import classifier_model, predict
from jobs.services.matching import rule_score

# The rules are confident when the best type holds this share of all the types' rule scores:
# one type matching alone has 1.0, two types matching as well as each other 0.5.
RULES_CONFIDENT = 0.6
# The learned classifier is confident when its type's probability reaches this.
MODEL_CONFIDENT = 0.5


@dataclass(frozen=True)
class Classification:
    document_type: DocumentType
    source: str  # JobFields.Source: rules, model or llm (user types are named, not classified)
    confidence: float


def classify_by_rules(types: list[DocumentType], text: str) -> Classification | None:
    """The type whose rules hold best on ``text``, with its share of all the types' rule scores;
    None when no type's rules hold. Ties go to the first type by name."""
    scores = [(rule_score(document_type, text), document_type) for document_type in types]
    total = sum(score for score, _ in scores)
    if total <= 0:
        return None
    best_score, best = max(scores, key=lambda pair: pair[0])  # max keeps the first of equals
    return Classification(document_type=best, source=JobFields.Source.RULES, confidence=round(best_score / total, 3))


def classify(types: list[DocumentType], text: str, model: bytes | None) -> Classification | None:
    """The type of a document of ``text`` among ``types``: the rules' when they are confident, else the
    learned ``model``'s (``jobs.services.classifier.fit``) when it is; else the rules' best guess with its
    low confidence, or None (no rule holds, and the model is unsure or knows no type: no type fits)."""
    by_rules = classify_by_rules(types, text)
    if by_rules is not None and by_rules.confidence >= RULES_CONFIDENT:
        return by_rules
    if model:
        predicted = predict(model, text)
        learned = next((t for t in types if t.pk == predicted.document_type_id), None)  # None: since deleted
        if learned is not None and predicted.confidence >= MODEL_CONFIDENT:
            return Classification(document_type=learned, source=JobFields.Source.MODEL,
                                  confidence=round(predicted.confidence, 3))
    return by_rules


def text_classify(*, owner_id: int, text: str) -> Classification | None:
    """The owner's type for a document of ``text`` (``classify`` over the owner's types and model)."""
    types = list(DocumentType.objects.filter(owner_id=owner_id).order_by("name"))
    if not types:
        return None
    return classify(types, text, classifier_model(owner_id=owner_id))


def job_classify(*, job: Job) -> Classification | None:
    """The document type of a job's result (its text as reviewers corrected it), or None: no type fits."""
    return text_classify(owner_id=job.owner_id, text=job_document_result(job).text)
