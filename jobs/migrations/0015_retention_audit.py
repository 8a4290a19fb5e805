"""Retention (per-user override, purged-files mark, the hourly jobs.tasks.retention_purge schedule) and the
audit log."""

from django.db import migrations, models

SCHEDULE_NAME = "jobs.retention_purge"


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name=SCHEDULE_NAME,
        defaults={"func": "jobs.tasks.retention_purge", "schedule_type": "H", "repeats": -1},
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=SCHEDULE_NAME).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0014_stored_page_and_export_bytes'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='files_purged_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='usersettings',
            name='retention_days',
            field=models.PositiveIntegerField(blank=True, help_text="Days this user's finished jobs are kept. Empty: the site default (OCR_RETENTION_DAYS); 0: kept.", null=True),
        ),
        migrations.CreateModel(
            name='AuditEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('action', models.CharField(choices=[('deleted', 'deleted'), ('canceled', 'canceled'), ('retried', 'retried'), ('corrected', 'corrected'), ('reviewed', 'marked reviewed'), ('exported', 'exported'), ('purged', 'files purged')], max_length=16)),
                ('job', models.UUIDField()),
                ('owner', models.BigIntegerField()),
                ('actor', models.CharField(max_length=160)),
                ('address', models.GenericIPAddressField(blank=True, null=True)),
                ('detail', models.CharField(blank=True, max_length=255)),
                ('at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'verbose_name_plural': 'audit entries',
                'ordering': ['-at', '-id'],
                'indexes': [models.Index(fields=['owner', '-at'], name='audit_owner_at'), models.Index(fields=['job'], name='audit_job')],
            },
        ),
        migrations.RunPython(create_schedule, delete_schedule),
    ]
