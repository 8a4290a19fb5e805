"""Settings modules: ``base`` (every deployment, read from the environment) and ``test``.

Nothing is imported here: importing ``ocrsite.settings.test`` must not run
``base`` before ``test`` has set its defaults.
"""
