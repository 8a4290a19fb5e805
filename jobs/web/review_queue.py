"""The review queue page (/review/): static shell; static/js/review-queue.js reads GET /api/v1/review-queue."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render


@login_required
def review_queue_page(request):
    return render(request, "jobs/review_queue.html")
