"""Operations endpoints: liveness, readiness, Prometheus metrics, and the KEDA queue-depth query.

``health`` (/healthz, /readyz), ``metrics`` (/metrics), ``keda`` (the SQL that
docker/k8s/keda.yaml embeds), ``urls`` (mounted at the site root).
"""
