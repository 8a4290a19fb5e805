"""How fast ``GET /api/v1/search`` answers over 1,000 stored pages, on a scratch database.

    .venv/bin/python bench/search.py                          # PostgreSQL (the test settings' server)
    DATABASE_URL=sqlite:///x.sqlite3 .venv/bin/python bench/search.py   # the embedded default's SQLite

Django's test-database machinery makes the scratch database (``test_ocr_<pid>``, or a temporary SQLite
file) with every migration and drops it at the end. The pages (20 jobs of 50, 30 lines of 8 words each,
drawn from 5,000 made-up words with a Zipf-like spread) are stored by the worker's service
(``job_record_page``), which indexes them as in production. Each query is asked through the whole API
stack (DRF's test client: middleware, authentication, the view, pagination, the answer) ``--repeat``
times after a warm-up; the median and the 90th percentile are printed per query.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

QUERIES = {
    "rare word": "w4321",
    "common word": "w2",
    "two words": "w3 w5",
    "phrase": '"w1 w2"',
    "prefix": "w12*",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--pages", type=int, default=50, help="per job")
    parser.add_argument("--lines", type=int, default=30, help="per page")
    parser.add_argument("--repeat", type=int, default=50)
    return parser.parse_args()


def page(number: int, texts: list[str]):
    from ocr_engine.schema import Line, Page, Region

    height = 20 * (len(texts) + 1)
    region = Region(id=f"p{number}-r1", type="text", label="text", order=1, bbox=[0, 0, 800, height],
                    polygon=[[0, 0], [800, 0], [800, height], [0, height]], confidence=0.9, text="\n".join(texts))
    lines = [Line(id=f"p{number}-l{i}", region_id=region.id, order=i, bbox=[0, 20 * i, 800, 20 * i + 18],
                  polygon=[[0, 20 * i], [800, 20 * i], [800, 20 * i + 18], [0, 20 * i + 18]], text=text,
                  confidence=0.9) for i, text in enumerate(texts, start=1)]
    return Page(page_number=number, width=800, height=height, scale=1.0, dpi=None, regions=[region], lines=lines,
                text="\n".join(texts))


def build(args, user) -> None:
    from jobs import services
    from jobs.models import Document, Job

    rng = random.Random(66)
    vocabulary = [f"w{k}" for k in range(1, 5001)]
    weights = [1 / k for k in range(1, 5001)]
    numbers = list(range(1, args.pages + 1))
    for j in range(args.jobs):
        document = Document.objects.create(owner=user, original_name=f"bench-{j}.pdf", sha256=f"{j:064x}",
                                           media_type="application/pdf", size_bytes=1, page_count=args.pages)
        job = Job.objects.create(owner=user, document=document, pipeline="ocr", lang="en", page_numbers=numbers,
                                 pages_total=args.pages, cluster="cpu", dedup_key=f"{j:064x}")
        services.job_claim(job_id=job.pk, worker_id="bench")
        for number in numbers:
            texts = [" ".join(rng.choices(vocabulary, weights, k=8)) for _ in range(args.lines)]
            record = services.PageRecord(page_number=number, page=page(number, texts))
            services.job_record_page(job_id=job.pk, worker_id="bench", record=record)
        services.job_finish(job_id=job.pk, worker_id="bench")


def measure(args, client) -> None:
    for name, q in QUERIES.items():
        for _ in range(5):  # warm: the first ask of a query plans it and fills caches
            client.get("/api/v1/search", {"q": q})
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            response = client.get("/api/v1/search", {"q": q})
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.content
        count = response.json()["count"]
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"{name:12} {q!r:12} {count:6} lines  median {statistics.median(times):6.1f} ms  p90 {p90:6.1f} ms")


def main() -> None:
    args = parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocrsite.settings.test")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import setup_databases, setup_test_environment, teardown_databases
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    setup_test_environment()  # the test client's host, "testserver", is allowed
    databases = setup_databases(verbosity=0, interactive=False)
    try:
        user = get_user_model().objects.create_user(username="bench", password="bench")
        started = time.perf_counter()
        build(args, user)
        pages = args.jobs * args.pages
        print(f"{connection.vendor}: {pages} pages, {pages * args.lines} lines stored and indexed in "
              f"{time.perf_counter() - started:.1f} s")
        if connection.vendor == "postgresql":  # the planner's statistics, as autovacuum keeps them on a live site
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE jobs_searchline")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        measure(args, client)
    finally:
        teardown_databases(databases, verbosity=0)


if __name__ == "__main__":
    main()
