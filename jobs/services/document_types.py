"""A user's document types: create, change, delete, and the type a job names (docs/extraction.md).

Types belong to their owner: another user's type is not found, exactly like a missing one. Every
write checks the type whole (its rules by ``jobs.services.matching.check_match``, its fields schema by
``ocr_engine.fields.parse_schema``) and marks the owner's learned classifier for retraining.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from jobs.models import DocumentType
from jobs.services.classifier import classifier_mark_stale
from jobs.services.matching import check_match
from ocr_engine.errors import InputError
from ocr_engine.fields import parse_schema

EDITABLE = ("name", "match", "matching_algorithm", "fields_schema", "backend")


class UnknownDocumentType(InputError):
    """A job names a document type its owner does not have."""

    code = "unknown_document_type"


class DocumentTypeNameTaken(InputError):
    code = "document_type_exists"


def document_type_list(*, owner) -> list[DocumentType]:
    return list(DocumentType.objects.filter(owner=owner).order_by("name"))


def document_type_get(*, owner, pk) -> DocumentType:
    """The owner's type ``pk``; ``DocumentType.DoesNotExist`` for another user's or a missing one."""
    return DocumentType.objects.get(owner=owner, pk=pk)


def document_type_resolve(*, owner, ref: str) -> DocumentType:
    """The owner's type named by ``ref``, its id or its name (an id wins: names are free text)."""
    ref = str(ref).strip()
    types = DocumentType.objects.filter(owner=owner)
    found = (types.filter(pk=int(ref)).first() if ref.isdigit() else None) or types.filter(name=ref).first()
    if found is None:
        raise UnknownDocumentType(f"document_type: you have no document type {ref!r} "
                                  "(GET /api/v1/document-types lists yours).")
    return found


def _checked(document_type: DocumentType) -> DocumentType:
    document_type.name = document_type.name.strip()
    if not document_type.name:
        raise InputError("name: a document type needs a name.", code="invalid_request")
    check_match(document_type.match, document_type.matching_algorithm)
    if document_type.fields_schema != {}:  # {}: a type that routes documents and reads no fields
        parse_schema(document_type.fields_schema)
    return document_type


def _saved(document_type: DocumentType) -> DocumentType:
    try:
        with transaction.atomic():
            document_type.save()
    except IntegrityError:
        raise DocumentTypeNameTaken(f"name: you have a document type named {document_type.name!r} already.") from None
    classifier_mark_stale(owner_id=document_type.owner_id)
    return document_type


def document_type_create(*, owner, **values: Any) -> DocumentType:
    unknown = set(values) - set(EDITABLE)
    if unknown:
        raise TypeError(f"not a document type's field: {sorted(unknown)}")
    return _saved(_checked(DocumentType(owner=owner, **values)))


def document_type_update(*, document_type: DocumentType, **changes: Any) -> DocumentType:
    for name, value in changes.items():
        if name not in EDITABLE:
            raise TypeError(f"not a document type's field: {name}")
        setattr(document_type, name, value)
    return _saved(_checked(document_type))


def document_type_delete(*, document_type: DocumentType) -> None:
    """Jobs of the type keep their fields; their ``JobFields.document_type`` becomes null."""
    owner_id = document_type.owner_id
    document_type.delete()
    classifier_mark_stale(owner_id=owner_id)
