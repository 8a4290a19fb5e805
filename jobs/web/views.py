"""Template views: read through selectors, change through services, render. No business logic here."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import Throttled

from jobs import selectors
from jobs.api.serializers import ApiUrls, job_links
from jobs.api.throttles import submissions_admit, submissions_wait
from jobs.errors import OPTION_FIELD_BY_CODE, UrlNotAllowed
from jobs.models import Job, PageResult
from jobs.selectors.batches import batch_jobs, batch_list_for_user, batch_progress
from jobs.services.accounts import api_token_regenerate, webhook_secret_rotate
from jobs.services.archives import is_zip
from jobs.services.audit import Actor
from jobs.services.batches import batch_create
from jobs.services.retention import job_expires_at
from jobs.services.submission import job_create
from jobs.summary import job_summary
from jobs.web.forms import UploadForm
from ocr_engine import exports
from ocr_engine.errors import OcrError
from ocr_engine.schema import REGION_TYPES

PAGE_SIZE = 25
RECENT_BATCHES = 10  # shown above the jobs on the dashboard's first page, newest first
EXPORT_LABELS = {"hocr": "hOCR"}


@login_required
def dashboard(request):
    """The user's jobs (live over ws/jobs/), or with ?view=pages their pages, lowest confidence first."""
    view = "pages" if request.GET.get("view") == "pages" else "jobs"
    rows = selectors.pages_worst_first(request.user) if view == "pages" else selectors.job_list_for_user(request.user)
    page_obj = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    batches = []
    if view == "jobs":
        for job in page_obj:  # for the "Expires" column, as the API's expires_at
            job.expires_at = job_expires_at(job)
        if page_obj.number == 1:
            batches = [{"batch": batch, "progress": batch_progress(batch), "jobs": list(batch_jobs(batch))}
                       for batch in batch_list_for_user(request.user).filter(owner=request.user)[:RECENT_BATCHES]]
    return render(request, "jobs/dashboard.html", {"view": view, "page_obj": page_obj, "batches": batches})


@dataclass
class Outcome:
    """What became of one uploaded file."""

    name: str
    job: Job | None = None
    reused: bool = False
    error: OcrError | None = None


@login_required
def upload(request):
    """Several files, one job each. Errors show next to the file or option they concern."""
    form = UploadForm(request.POST or None, request.FILES or None, owner=request.user)
    outcomes: list[Outcome] = []
    if request.method == "POST" and form.is_valid():
        if any(is_zip(file) for file in form.cleaned_data["files"]):
            return _upload_batch(request, form)
        # Each file is a job of the submit rate, as on the API; over it, none is stored.
        if wait := submissions_wait(request.user, jobs=len(form.cleaned_data["files"])):
            return _throttled(request, form, wait)
        for file in form.cleaned_data["files"]:
            try:
                job, reused = job_create(owner=request.user, file=file, filename=file.name, options=form.options())
            except OcrError as error:
                if error.code in OPTION_FIELD_BY_CODE or isinstance(error, UrlNotAllowed):
                    # The only URL of this form is the webhook's.
                    form.add_error(OPTION_FIELD_BY_CODE.get(error.code, "webhook_url"), error.message)
                    break
                outcomes.append(Outcome(file.name, error=error))
            else:
                outcomes.append(Outcome(file.name, job=job, reused=reused))
        queued = [o for o in outcomes if o.job]
        if not form.errors and len(queued) == len(outcomes):
            messages.success(request, _queued_message(queued))
            if len(queued) == 1:
                return redirect("web:job", job_id=queued[0].job.pk)
            return redirect("web:dashboard")
    status = 400 if form.errors or any(o.error for o in outcomes) else 200
    return render(request, "jobs/upload.html", {"form": form, "outcomes": outcomes}, status=status)


def _throttled(request, form: UploadForm, wait: int):
    form.add_error(None, f"You have submitted more files than this site takes in a short time "
                         f"({settings.API_THROTTLE_RATES['submit']}). Try again in {wait} seconds.")
    response = render(request, "jobs/upload.html", {"form": form, "outcomes": []}, status=429)
    response["Retry-After"] = str(wait)
    return response


def _upload_batch(request, form: UploadForm):
    """Files with a ZIP among them: one batch of them all (the ZIP's members and the other files), each
    member a job of the submit rate."""
    options = form.options()
    try:
        batch = batch_create(owner=request.user, files=form.cleaned_data["files"], by=Actor.of_request(request),
                             admit=lambda members: submissions_admit(request.user, members), options=options)
    except Throttled as throttled:
        return _throttled(request, form, int(throttled.wait))
    except OcrError as error:
        field = "webhook_url" if isinstance(error, UrlNotAllowed) else "files"  # the form's only URL is the webhook's
        form.add_error(OPTION_FIELD_BY_CODE.get(error.code, field), error.message)
        return render(request, "jobs/upload.html", {"form": form, "outcomes": []}, status=400)
    refused = f"; {len(batch.errors)} file(s) refused, listed with it" if batch.errors else ""
    messages.success(request, f"Batch {batch.name}: {batch.members.count()} job(s) queued{refused}.")
    return redirect("web:dashboard")


def _queued_message(queued: list[Outcome]) -> str:
    reused = sum(o.reused for o in queued)
    text = f"{len(queued)} job{'s' if len(queued) != 1 else ''} queued."
    if reused:
        text += f" {reused} of them had been submitted before with the same options: showing that job."
    return text


def _visible_job(user, job_id) -> Job:
    try:
        return selectors.job_get_for_user(user, job_id)
    except Job.DoesNotExist:
        raise Http404("No such job.") from None


@login_required
def job_detail(request, job_id):
    """The review page. static/js/job.js reads pages through the API, following ``links``."""
    job = _visible_job(request.user, job_id)
    urls = ApiUrls.of(request)
    config = {
        "job": {**job_summary(job), "page_numbers": job.page_numbers, "reviewed": job.reviewed_at is not None},
        "pages": selectors.job_page_summaries(job),
        "links": job_links(urls, job),
        "fields": _fields_links(urls, job),
        "ws": f"/ws/jobs/{job.pk}/",
        "regionTypes": REGION_TYPES,
        "lowConfidence": PageResult.LOW_CONFIDENCE,  # the default of the page's threshold, as in the review queue
    }
    return render(request, "jobs/job_detail.html", {
        "job": job,
        "expires_at": job_expires_at(job),
        "config": config,
        "exports": _export_links(job),
    })


def _fields_links(urls: ApiUrls, job: Job) -> dict[str, str]:
    """What the job page's fields panel (static/js/job-fields.js) calls: the job's fields, one field (a
    template of its name), the job's document type, and the user's types to choose from."""
    return {"self": urls.url("job-fields", pk=job.pk), "field": urls.template("job-field", "name", pk=job.pk),
            "document_type": urls.url("job-document-type", pk=job.pk), "document_types": urls.url("document-type-list")}


def _export_links(job: Job) -> list[tuple[str, str]]:
    """(label, URL) of each export the job page offers: every format, then the PDF as PDF/A-2b."""
    links = [(EXPORT_LABELS.get(fmt, fmt.upper()), reverse("api:job-export", kwargs={"pk": job.pk, "fmt": fmt}))
             for fmt in exports.FORMATS]
    pdf = reverse("api:job-export", kwargs={"pk": job.pk, "fmt": "pdf"})
    return [*links, *((f"PDF/A-{level}", f"{pdf}?pdfa={level}") for level in exports.PDFA_LEVELS)]


NEW_WEBHOOK_SECRET = "new_webhook_secret"  # session key: the secret is shown on the next page view only


@login_required
def account_settings(request):
    return render(request, "jobs/settings.html", {
        "token": Token.objects.filter(user=request.user).first(),
        "public_url": settings.OCR_PUBLIC_URL,
        "new_webhook_secret": request.session.pop(NEW_WEBHOOK_SECRET, None),
    })


@login_required
@require_POST
def webhook_secret_new(request):
    request.session[NEW_WEBHOOK_SECRET] = webhook_secret_rotate(user=request.user)
    messages.success(request, "A new webhook secret was made; deliveries are signed with it from now on.")
    return redirect("web:settings")


@login_required
@require_POST
def token_regenerate(request):
    api_token_regenerate(user=request.user)
    messages.success(request, "A new API token was created; the old one no longer works.")
    return redirect("web:settings")
