"""The learned document-type classifier: one per owner, trained from the owner's own classified jobs.

As Paperless-ngx's ``documents/classifier.py``: the training data are the documents whose type a person
gave (here: named at submit, or set by a reviewer: ``JobFields.type_source == "user"``); a schedule
(``jobs.tasks.train_classifiers``, migration 0022) retrains an owner whose data changed since the last
training, and skips one whose data is the same (by a hash of it). The model is scikit-learn's TF-IDF of
the result text's words, then a logistic regression, whose probability is the confidence. Words of
letters only: dates, amounts and numbers differ on every document of a type. Single words, not also
pairs as Paperless-ngx has: a user has few documents of a type, and pairs split what they show
(bench/classify.py scores both).

What is stored (``DocumentClassifier.model``) are the model's arrays (vocabulary, IDF weights,
coefficients), written and read by NumPy without pickle: see ``DocumentClassifier``.
"""

from __future__ import annotations

import hashlib
import io
import logging

import numpy as np
from django.db.models import F, Q
from django.utils import timezone
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from jobs.models import DocumentClassifier, Job, JobFields
from jobs.selectors.results import job_document_result

logger = logging.getLogger(__name__)

MAX_DOCUMENTS = 2000  # an owner's latest classified jobs: enough to learn from, bounded to train
VECTORIZER = dict(token_pattern=r"(?u)\b[^\W\d_]{2,}\b", ngram_range=(1, 1), sublinear_tf=True,
                  max_features=50_000, dtype=np.float64)


def classifier_mark_stale(*, owner_id: int) -> None:
    """The owner's types or classified jobs changed: the schedule retrains their classifier."""
    DocumentClassifier.objects.update_or_create(owner_id=owner_id, defaults={"changed_at": timezone.now()})


def training_jobs(*, owner_id: int) -> list[tuple[Job, int]]:
    """(job, its type's id) for the owner's succeeded jobs whose type a person gave, newest first."""
    rows = (JobFields.objects.filter(job__owner_id=owner_id, type_source=JobFields.Source.USER,
                                     document_type__isnull=False, job__status=Job.Status.SUCCEEDED)
            .select_related("job__document").order_by("-job__created_at")[:MAX_DOCUMENTS])
    return [(row.job, row.document_type_id) for row in rows]


def _data_key(pairs: list[tuple[str, int]]) -> str:
    return hashlib.sha256(repr(sorted(pairs)).encode()).hexdigest()


def fit(texts: list[str], labels: list[int]) -> bytes | None:
    """The model learned from ``texts`` labelled by type ids, as ``.npz`` bytes; None under two types."""
    if len(set(labels)) < 2:
        return None
    vectorizer = TfidfVectorizer(**VECTORIZER)
    features = vectorizer.fit_transform(texts)
    # Balanced: a user names many more documents of one type than of another; a rare type still counts.
    model = LogisticRegression(C=10.0, max_iter=1000, class_weight="balanced").fit(features, labels)
    out = io.BytesIO()
    np.savez_compressed(out, terms=np.array(vectorizer.get_feature_names_out(), dtype=str), idf=vectorizer.idf_,
                        coef=model.coef_, intercept=model.intercept_, classes=model.classes_)
    return out.getvalue()


def probabilities(model: bytes, text: str) -> dict[int, float]:
    """Each type's probability (by type id) for a document of ``text`` under ``model`` (``fit``'s bytes)."""
    arrays = np.load(io.BytesIO(model), allow_pickle=False)
    vectorizer = TfidfVectorizer(**VECTORIZER, vocabulary={term: i for i, term in enumerate(arrays["terms"])})
    vectorizer.idf_ = arrays["idf"]
    scores = np.asarray(vectorizer.transform([text]) @ arrays["coef"].T + arrays["intercept"]).ravel()
    if len(arrays["classes"]) == 2:  # a binary logistic regression has one column: the second class's
        second = 1.0 / (1.0 + np.exp(-scores[0]))
        shares = np.array([1.0 - second, second])
    else:
        exp = np.exp(scores - scores.max())
        shares = exp / exp.sum()
    return {int(type_id): float(share) for type_id, share in zip(arrays["classes"], shares)}


def classifier_train(*, owner_id: int) -> DocumentClassifier:
    """Train the owner's classifier from their classified jobs, unless it learned from the same ones."""
    pairs = [(job, type_id) for job, type_id in training_jobs(owner_id=owner_id)]
    key = _data_key([(str(job.pk), type_id) for job, type_id in pairs])
    started = timezone.now()
    classifier, _ = DocumentClassifier.objects.get_or_create(owner_id=owner_id)
    if classifier.data_key != key or classifier.trained_at is None:
        texts = [job_document_result(job).text for job, _ in pairs]
        classifier.model = fit(texts, [type_id for _, type_id in pairs])
        classifier.documents, classifier.data_key = len(pairs), key
        logger.info("classifier of user %s: trained from %s jobs", owner_id, len(pairs))
    classifier.trained_at = started
    classifier.save(update_fields=["model", "documents", "data_key", "trained_at"])
    return classifier


def classifiers_train_stale() -> list[int]:
    """Retrain every owner whose training data changed since their last training (the schedule's task)."""
    stale = DocumentClassifier.objects.filter(
        Q(trained_at__isnull=True) | Q(changed_at__gt=F("trained_at"))).values_list("owner_id", flat=True)
    trained = []
    for owner_id in stale:
        classifier_train(owner_id=owner_id)
        trained.append(owner_id)
    return trained


def classifier_model(*, owner_id: int) -> bytes | None:
    """The owner's learned model (``fit``'s bytes); None before it has learned two types."""
    model = DocumentClassifier.objects.filter(owner_id=owner_id).values_list("model", flat=True).first()
    return bytes(model) if model else None
