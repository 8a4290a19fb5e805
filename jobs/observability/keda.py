"""The queries KEDA runs to size the GPU and the llm worker Deployments from zero.

docker/k8s/keda.yaml embeds them verbatim (tests/deploy checks that the two are
identical, and tests/jobs runs it on the real schema). It counts the jobs that
need a GPU worker now or soon: queued ones, and running ones (a running job
holds a worker, or waits for one between two budget slices). Table and column
names are those of ``jobs.Job``; the ``job_status_cluster`` index covers it.
"""

GPU_QUEUE_DEPTH_SQL = "SELECT COUNT(*) FROM jobs_job WHERE cluster = 'gpu' AND status IN ('queued', 'running')"

# The llm cluster's queue (jobs.services.extraction): fields stages pending, waiting for a worker or
# being read. Its own queue, so the fields stage scales apart from OCR; ``jobfields_status`` covers it.
LLM_QUEUE_DEPTH_SQL = "SELECT COUNT(*) FROM jobs_jobfields WHERE status = 'pending'"
