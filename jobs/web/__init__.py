"""The browser UI: Django templates over the same selectors and services as the API."""
