"""The progress reporter: both groups get the event, in the order published; a channel-layer outage never
reaches the caller."""

from __future__ import annotations

import logging

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from jobs import progress
from tests.jobs.factories import JobFactory

pytestmark = pytest.mark.django_db


def test_event_reaches_job_and_owner_groups():
    job = JobFactory()
    layer = get_channel_layer()
    job_channel = async_to_sync(layer.new_channel)()
    user_channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(f"job-{job.pk}", job_channel)
    async_to_sync(layer.group_add)(f"user-{job.owner_id}", user_channel)

    progress.publish(job, "page_done", page_number=1, line_count=7, region_count=2, timings={"ocr": 1.0})

    async def one_each():  # in one event loop, as a consumer receives (channels-redis cleans up after each)
        return [await layer.receive(channel) for channel in (job_channel, user_channel)]

    for message in async_to_sync(one_each)():
        assert message["type"] == "job.event" and message["event"] == "page_done"
        assert message["job"]["id"] == str(job.pk) and message["job"]["status"] == "queued"
        assert (message["page_number"], message["line_count"], message["region_count"]) == (1, 7, 2)


def test_unreachable_channel_layer_is_logged_not_raised(settings, caplog):
    job = JobFactory()
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]}}}
    with caplog.at_level(logging.WARNING, logger="jobs.progress"):
        progress.publish(job, "succeeded")
    assert "Could not publish succeeded" in caplog.text


def test_events_arrive_in_the_order_they_were_published():
    job = JobFactory()
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(f"job-{job.pk}", channel)

    for number in range(1, 31):
        progress.publish(job, "page_done", page_number=number)

    async def thirty():  # in one event loop, as a consumer receives (channels-redis cleans up after each)
        return [(await layer.receive(channel))["page_number"] for _ in range(30)]

    received = async_to_sync(thirty)()
    assert received == list(range(1, 31))
