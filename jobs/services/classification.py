"""Classification: which of its owner's document types a job's document is (docs/extraction.md).

Cheap first, as Paperless-ngx and the field's pipelines do: the types' rules (``jobs.services.matching``)
on the job's result text; when they are not confident, the classifier learned from the owner's own
classified documents (``jobs.services.classifier``); when neither is and an LLM is configured, the LLM
(``jobs.services.llm_classification``). ``job_classify`` decides and stores nothing: the
fields stage (``jobs.services.extraction``) stores its answer on the job's ``JobFields``.
"""

from __future__ import annotations

from dataclasses import dataclass

from jobs.llm import llm_configured
from jobs.models import DocumentType, Job, JobFields
from jobs.selectors.results import job_document_result
from jobs.services.classifier import classifier_model, probabilities
from jobs.services.llm_classification import llm_type
from jobs.services.matching import rules_hold

# The learned classifier is confident when its type's probability reaches this.
MODEL_CONFIDENT = 0.5


@dataclass(frozen=True)
class Classification:
    document_type: DocumentType
    source: str  # JobFields.Source: rules, model or llm (user types are named, not classified)
    confidence: float


def classify(types: list[DocumentType], text: str, model: bytes | None, *, llm: bool = False) -> Classification | None:
    """The type of a document of ``text`` among ``types`` (ordered by name):

    1. the rules: one type's rules holding alone decide (confidence 1);
    2. the learned ``model`` (``jobs.services.classifier.fit``), among the types whose rules hold when
       several do (it breaks their tie), else among all: its type when its probability (renormalised
       over those types) reaches ``MODEL_CONFIDENT``;
    3. with ``llm``, the LLM's type (``jobs.services.llm_classification``);
    4. the first type whose rules hold, with confidence 1 / how many hold; or None: no type fits.
    """
    holding = [document_type for document_type in types if rules_hold(document_type, text)]
    if len(holding) == 1:
        return Classification(document_type=holding[0], source=JobFields.Source.RULES, confidence=1.0)
    if model:
        learned = probabilities(model, text)
        candidates = {t.pk: learned[t.pk] for t in holding or types if t.pk in learned}  # a deleted type: gone
        total = sum(candidates.values())
        if total > 0:
            best = max(candidates, key=candidates.get)
            if candidates[best] / total >= MODEL_CONFIDENT:
                return Classification(document_type=next(t for t in types if t.pk == best),
                                      source=JobFields.Source.MODEL, confidence=round(candidates[best] / total, 3))
    picked = llm_type(types, text) if llm else None
    if picked is not None:
        return Classification(document_type=picked[0], source=JobFields.Source.LLM, confidence=picked[1])
    if holding:
        return Classification(document_type=holding[0], source=JobFields.Source.RULES,
                              confidence=round(1 / len(holding), 3))
    return None


def text_classify(*, owner_id: int, text: str) -> Classification | None:
    """The owner's type for a document of ``text`` (``classify`` over the owner's types and model)."""
    types = list(DocumentType.objects.filter(owner_id=owner_id).order_by("name"))
    if not types:
        return None
    return classify(types, text, classifier_model(owner_id=owner_id), llm=llm_configured())


def job_classify(*, job: Job) -> Classification | None:
    """The document type of a job's result (its text as reviewers corrected it), or None: no type fits."""
    return text_classify(owner_id=job.owner_id, text=job_document_result(job).text)
