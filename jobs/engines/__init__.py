"""The engines a worker runs, seen from Django: settings to EngineConfig (``config``), one warm
engine per process (``pool``), and whether a cluster's models are there (``health``)."""
