"""Schedule the minute-by-minute recovery of abandoned jobs (jobs.tasks.requeue_stale)."""

from django.db import migrations

SCHEDULE_NAME = "jobs.requeue_stale"


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    # cluster=None: django-q2 runs unnamed schedules on the default (cpu)
    # cluster only, so one scheduler owns it even with several clusters.
    Schedule.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={"func": "jobs.tasks.requeue_stale", "schedule_type": "I", "minutes": 1, "repeats": -1},
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=SCHEDULE_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
