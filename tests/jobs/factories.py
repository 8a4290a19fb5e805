"""factory_boy factories for platform rows (files are real, small PNGs)."""

from __future__ import annotations

import hashlib
import io

import factory
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from PIL import Image

from jobs.models import Document, Job, PageResult


def png_bytes(size=(40, 30), color="white") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return buf.getvalue()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw")


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Document

    class Params:
        content = factory.LazyFunction(png_bytes)

    owner = factory.SubFactory(UserFactory)
    original_name = "page.png"
    media_type = "image/png"
    page_count = 1
    file = factory.LazyAttribute(lambda o: ContentFile(o.content, name="page.png"))
    sha256 = factory.LazyAttribute(lambda o: hashlib.sha256(o.content).hexdigest())
    size_bytes = factory.LazyAttribute(lambda o: len(o.content))


class JobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Job

    owner = factory.SubFactory(UserFactory)
    document = factory.SubFactory(DocumentFactory, owner=factory.SelfAttribute("..owner"))
    pipeline = Job.Pipeline.OCR
    lang = "en"
    page_numbers = factory.LazyAttribute(lambda o: list(range(1, o.document.page_count + 1)))
    pages_total = factory.LazyAttribute(lambda o: len(o.page_numbers))
    cluster = Job.Cluster.CPU
    dedup_key = factory.Sequence(lambda n: f"{n:064x}")


class PageResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PageResult

    job = factory.SubFactory(JobFactory)
    page_number = 1
    status = PageResult.Status.SUCCEEDED
