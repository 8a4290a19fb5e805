"""Schedule the sweep of lost webhook deliveries every 5 minutes (jobs.webhooks.tasks.sweep_webhooks)."""

from django.db import migrations

SCHEDULE_NAME = "jobs.sweep_webhooks"


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={"func": "jobs.webhooks.tasks.sweep_webhooks", "schedule_type": "I", "minutes": 5, "repeats": -1},
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=SCHEDULE_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [("jobs", "0007_page_edits"), ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more")]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
