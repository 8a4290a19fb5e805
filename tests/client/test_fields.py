"""A job's fields through the client against the real stack: the SDK (sync and async), corrections, the
command line's fields.json, and the MCP tool ``ocr_fields``.

Most tests read one invoice job whose page (tests.ocr_engine.fields.hand_invoice) is stored through the
worker's services and whose fields the fields stage's task reads (rules). One test goes all the way: a
drawn invoice (bench/fields_draw.py) submitted with ``ocr-client submit --format fields.json``, read by
the real engine on the package's qcluster, classified and extracted on a real ``llm`` cluster.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest
from ocr_client import AsyncClient, BadRequest, Client, Evidence, Fields, NotFound

from tests.client.conftest import Account
from tests.client.test_cli import ocr_client
from tests.client.test_mcp import over_stdio, portal  # noqa: F401 - portal is a fixture
from tests.e2e.conftest import background

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db]  # django_db: see conftest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))  # the labelled set's drawing and schemas (bench/fields.py)


def account(username: str, schema: dict | None = None):
    """A user of this module's own with an ``invoice`` document type (alice's jobs stay without a fields
    stage), and a token."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from jobs.models import DocumentType
    from tests.ocr_engine.fields.hand_invoice import SCHEMA

    user = get_user_model().objects.create_user(username=username, password=f"pw-{username}")
    DocumentType.objects.create(owner=user, name="invoice", match="invoice rechnung facture factura",
                                fields_schema=schema or SCHEMA)
    return user, Token.objects.create(user=user).key


@pytest.fixture(scope="module")
def dave(live, django_db_blocker):
    """Has the type of tests.ocr_engine.fields.hand_invoice."""
    with django_db_blocker.unblock():
        return account("client-dave")


@pytest.fixture(scope="module")
def erin(live, django_db_blocker):
    """Has the invoice type the labelled set is scored with (bench/fields_schemas.py)."""
    from fields_schemas import SCHEMAS

    with django_db_blocker.unblock():
        return account("client-erin", SCHEMAS["invoice"])


@pytest.fixture(scope="module")
def client(live, dave):
    with Client(live.url, dave[1]) as made:
        yield made


@pytest.fixture(scope="module")
def invoice_job_id(dave, django_db_blocker) -> str:
    """dave's invoice job (named type ``invoice``), its fields read by the stage's task."""
    from jobs.models import DocumentType
    from jobs.tasks import extract_fields
    from tests.jobs.fields_jobs import invoice_job

    with django_db_blocker.unblock():
        job = invoice_job(dave[0], document_type=DocumentType.objects.get(owner=dave[0], name="invoice"))
        extract_fields(str(job.pk))
    return str(job.pk)


def test_job_fields_are_typed_values_with_their_lines(client, invoice_job_id):
    fields = client.job(invoice_job_id).fields()
    assert isinstance(fields, Fields) and fields.status == "succeeded" and fields.final and fields.error is None
    assert (fields.document_type.name, fields.document_type.source, fields.document_type.confidence) == \
        ("invoice", "user", 1.0)
    number = fields.fields["invoice_number"]
    assert (number.value, number.grounded, number.reason, number.line_ids, number.pages) == \
        ("INV-2024-001", True, None, ["p1-l1"], [1])
    assert len(number.evidence[0].polygon) == 4 and 0 < number.confidence <= 1
    assert fields["invoice_date"].value == "2024-03-05"
    items = fields.fields["line_items"]
    assert [item["description"].value for item in items] == ["Printer paper", "Office chair"]
    amount = fields["line_items.1.amount"]
    assert (amount.name, amount.value, amount.line_ids) == ("line_items.1.amount", 250.0, ["p1-l14"])
    assert {"invoice_number", "line_items.0.description", "line_items.1.quantity"} < set(fields.flat())
    assert fields.raw["fields"]["customer"]["value"] == "Acme Industries"


def test_a_correction_is_stored_with_who_and_when(client, invoice_job_id):
    job = client.job(invoice_job_id)
    after = job.correct_field("line_items.0.amount", value="12,50")
    corrected = after["line_items.0.amount"]
    assert (corrected.value, corrected.grounded, corrected.confidence) == (12.5, True, 1.0)
    assert corrected.corrected["by"] == "client-dave" and corrected.corrected["at"]
    after = job.correct_field("customer", evidence=[Evidence(page=1, line_id="p1-l4")])
    assert after["customer"].line_ids == ["p1-l4"] and after["customer"].value == "Acme Industries"
    assert job.fields()["line_items.0.amount"].value == 12.5  # stored: read again

    with pytest.raises(BadRequest) as refused:
        job.correct_field("invoice_date", value="not a date")
    assert refused.value.code == "invalid_field_value"
    with pytest.raises(NotFound) as unknown:
        job.correct_field("line_items.7.amount", value=1)
    assert unknown.value.code == "field_not_found"
    with pytest.raises(TypeError):
        job.correct_field("customer")  # neither value nor evidence


def test_the_async_client_reads_the_same_fields(live, dave, invoice_job_id):
    async def read():
        async with AsyncClient(live.url, dave[1]) as aclient:
            return await (await aclient.job(invoice_job_id)).fields()

    fields = asyncio.run(read())
    assert fields.status == "succeeded" and fields["invoice_number"].line_ids == ["p1-l1"]


def test_another_user_cannot_read_the_fields(alice, invoice_job_id):
    with pytest.raises(NotFound):
        alice.job(invoice_job_id).fields()


def test_export_fields_json(live, dave, invoice_job_id, tmp_path):
    env = {**live.env(live.alice), "OCR_TOKEN": dave[1]}
    done = ocr_client(env, "export", invoice_job_id, "fields.json", "-o", str(tmp_path / "x.fields.json"))
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "x.fields.json").read_text())
    assert written["status"] == "succeeded" and written["fields"]["invoice_number"]["evidence"][0]["line_id"] == "p1-l1"


def test_ocr_fields_gives_each_value_with_its_page_lines_and_review_link(live, dave, invoice_job_id, portal):
    with over_stdio(portal, live, Account("client-dave", dave[1])) as tools:
        called = tools("ocr_fields", job=invoice_job_id)
        other = tools("ocr_fields", job="00000000-0000-0000-0000-000000000000")
    assert not called.is_error, called.content
    answer = called.structured_content
    assert answer["status"] == "succeeded" and answer["finished"]
    assert answer["document_type"] == {"name": "invoice", "source": "user", "confidence": 1.0}
    by_name = {one["name"]: one for one in answer["fields"]}
    number = by_name["invoice_number"]
    assert (number["page"], number["line_ids"], number["grounded"]) == (1, ["p1-l1"], True)
    assert number["link"] == f"{live.url}/jobs/{invoice_job_id}/?page=1&line=p1-l1"
    assert by_name["line_items.1.description"]["line_ids"] == ["p1-l12"]
    assert other.is_error and "not_found" in other.content[0].text


@pytest.fixture(scope="module")
def receipt_job_id(dave, django_db_blocker) -> str:
    """Another of dave's invoice jobs, and a second type of dave's, ``receipt``, for it to become."""
    from jobs.models import DocumentType
    from tests.jobs.fields_jobs import invoice_job

    with django_db_blocker.unblock():
        DocumentType.objects.create(owner=dave[0], name="receipt", match="receipt", fields_schema={})
        job = invoice_job(dave[0], document_type=DocumentType.objects.get(owner=dave[0], name="invoice"))
    return str(job.pk)


def test_set_document_type_names_the_type_and_the_fields_are_read_again(client, receipt_job_id):
    job = client.job(receipt_job_id)
    with pytest.raises(BadRequest) as unknown:
        job.set_document_type("no such type")
    assert unknown.value.code == "unknown_document_type"
    fields = job.set_document_type("receipt")
    assert (fields.document_type.name, fields.document_type.source, fields.document_type.confidence) == \
        ("receipt", "user", 1.0)
    assert fields.status == "pending"  # queued on the llm cluster, which this package does not run


def test_submit_format_fields_json_reads_a_drawn_invoice_end_to_end(live, erin, tmp_path):
    """Real engine, real classification by the type's rules, real ``llm`` cluster running the rules backend."""
    from fields_draw import invoice

    page = invoice(0)  # English, label and value on one line
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    buffer = io.BytesIO()
    page.image.save(buffer, format="PNG")
    (folder / "bill.png").write_bytes(buffer.getvalue())
    env = {**live.env(live.alice), "OCR_TOKEN": erin[1]}
    with background([sys.executable, "manage.py", "qcluster"], {**live.server_env, "Q_CLUSTER_NAME": "llm"},
                    tmp_path / "llm-cluster.log"):
        done = ocr_client(env, "submit", str(folder), "--pipeline", "ocr", "--lang", "en", "--format",
                          "txt,fields.json", "-o", str(out), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    written = json.loads((out / "bill.fields.json").read_text())
    assert (out / "bill.txt").exists()
    assert written["status"] == "succeeded", written
    assert written["document_type"]["name"] == "invoice" and written["document_type"]["source"] == "rules"
    truth = page.fields["invoice_number"]["value"]
    assert written["fields"]["invoice_number"]["value"] == truth
    assert written["fields"]["invoice_number"]["grounded"] is True
