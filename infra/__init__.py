"""Deployment assets: Dockerfile, Alembic migrations."""
