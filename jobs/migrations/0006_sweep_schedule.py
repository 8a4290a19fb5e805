"""Schedule the hourly removal of stored files no row references (jobs.tasks.sweep_orphan_files)."""

from django.db import migrations

SCHEDULE_NAME = "jobs.sweep_orphan_files"


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={"func": "jobs.tasks.sweep_orphan_files", "schedule_type": "H", "repeats": -1},
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=SCHEDULE_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [("jobs", "0005_user_quotas")]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
