"""Processes: `hindsight up`, the supervisor, embedded Redis/PostgreSQL, the long-running roles and the indexer loop."""
