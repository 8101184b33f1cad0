"""The HTTP tests use the `live` fixture (tests/integration/live_api.py): the API served by a real uvicorn
on a free port, around the real pipeline (scheduler, worker, indexer)."""
