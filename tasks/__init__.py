"""Celery app and thin tasks: decode ids, call one use case, log the report."""
