"""A fourth pipeline, registered at test time, reaches every place jobs offers pipelines.

Nothing outside this module knows the fake: the API listing, the upload form,
submission checks and cluster routing all read the engine's registry.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import Job
from jobs.queue import cluster_for
from jobs.web.forms import UploadForm
from ocr_engine import pipelines
from ocr_engine.config import EngineConfig
from tests.jobs.helpers import small_png

pytestmark = pytest.mark.django_db


class FakeGpuPipeline:
    name = "fake"
    label = "Fake reader (tests only)"
    needs_gpu = True

    def build(self, config):
        return None

    def run(self, built, config, image):
        return {}

    def normalize(self, raw, **page):
        raise NotImplementedError

    def model_names(self, config):
        return {"fake": "none"}

    def pack_problem(self, models_dir):
        return None


@pytest.fixture
def fake_pipeline():
    pipelines.register(FakeGpuPipeline())
    yield "fake"
    pipelines.unregister("fake")


def test_registered_pipeline_is_listed_offered_checked_and_routed(fake_pipeline, api_client, settings):
    listed = {p["name"]: p for p in api_client.get("/api/v1/pipelines").json()["pipelines"]}
    assert listed["fake"]["label"] == "Fake reader (tests only)" and listed["fake"]["needs_gpu"] is True
    assert listed["fake"]["available"] is False and listed["ocr"]["needs_gpu"] is False
    assert dict(UploadForm().fields["pipeline"].choices)["fake"] == "Fake reader (tests only): needs a GPU cluster"
    assert EngineConfig(pipeline="fake").pipeline == "fake"

    refused = api_client.post("/api/v1/jobs", {"file": SimpleUploadedFile("scan.png", small_png()),
                                               "pipeline": "fake"}, format="multipart")
    assert refused.status_code == 400 and refused.json()["code"] == "gpu_required"

    settings.OCR_GPU_CLUSTER = True
    accepted = api_client.post("/api/v1/jobs", {"file": SimpleUploadedFile("scan.png", small_png()),
                                                "pipeline": "fake"}, format="multipart")
    assert accepted.status_code == 202, accepted.json()
    job = Job.objects.get(pk=accepted.json()["id"])
    assert job.pipeline == "fake" and job.cluster == Job.Cluster.GPU == cluster_for("fake")
    listed = api_client.get("/api/v1/jobs", {"pipeline": "fake"}).json()
    assert [j["id"] for j in listed["results"]] == [str(job.pk)]


def test_unknown_pipeline_is_refused_once_unregistered(api_client):
    response = api_client.post("/api/v1/jobs", {"file": SimpleUploadedFile("scan.png", small_png()),
                                                "pipeline": "fake"}, format="multipart")
    assert response.status_code == 400 and response.json()["code"] == "unsupported_option"
