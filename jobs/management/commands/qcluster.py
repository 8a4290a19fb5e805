"""``python manage.py qcluster``: django-q2's own command, plus a model check, a page-boundary drain and a watch
of its workers (``jobs.cluster_watch``).

This app is listed before ``django_q`` in INSTALLED_APPS so that Django picks
this command over django-q2's (an app listed first wins a command's name);
``tests/deploy`` checks that it stays so. Everything else is django-q2's.
"""

from __future__ import annotations

import os
import signal

from django.conf import settings
from django.core.management.base import CommandError
from django_q.conf import Conf
from django_q.management.commands.qcluster import Command as QclusterCommand

from jobs import cluster_watch, worker
from jobs.engines.health import model_problems


class Command(QclusterCommand):
    help = ("Start a django-q2 cluster (Q_CLUSTER_NAME=cpu|gpu). Refuses to start when the cluster's models are "
            "missing; on SIGTERM each worker commits its current page and hands the job back to the queue; "
            "exits with status 3 when a worker died while idle (django-q2 issue #23), to be started again.")

    def handle(self, *args, **options):
        cluster = options.get("cluster_name") or Conf.CLUSTER_NAME
        problems = model_problems(cluster)
        if problems:
            # Refusing here beats failing every job later: the container restarts
            # with this message in its log until the models are installed.
            raise CommandError(f"The {cluster} worker cannot start, its models are missing or damaged:\n  "
                               + "\n  ".join(problems))
        worker.install_drain()
        worker.install_core_shares(Conf.WORKERS, settings.OCR_CPU_THREADS)
        cluster_watch.install()
        # Before django-q2 forks: the sentinel, workers and scheduler inherit it.
        os.nice(settings.Q_WORKER_NICE)
        super().handle(*args, **options)  # returns once the cluster runs
        # django-q2 installed its stop handlers while starting; ours run first, then theirs.
        worker.drain_on(signal.SIGTERM, signal.SIGINT)
        # Until the cluster is stopped: dead workers' jobs handed on at once, and a cluster whose task queue
        # a dead worker may have locked ended, for its supervisor to start it again (django-q2 issue #23).
        cluster_watch.watch(cluster)
