"""All SQL, behind one facade. Each public method is one transaction; callers never see a Session.

The queries live with the part of the pipeline that runs them: scheduling_sql (ingest, backlog, claims),
review_sql (a review's reads and its one write transaction), outbox_sql (the indexer's relay), recall_reads,
progress_sql and tool_insights_sql. `Repository` is all of them on one engine; a use case sees only the port it needs
(`ReviewStore`, `OutboxStore` in pipeline.core.ports).
"""

from __future__ import annotations

from pipeline.adapters.postgres.progress_sql import ProgressQueries
from pipeline.adapters.postgres.recall_reads import RecallReads
from pipeline.adapters.postgres.review_sql import ReviewQueries
from pipeline.adapters.postgres.scheduling_sql import SchedulingQueries
from pipeline.adapters.postgres.tool_insights_sql import ToolInsightReads


class Repository(SchedulingQueries, ReviewQueries, RecallReads, ProgressQueries, ToolInsightReads):
    """The PostgreSQL store. Satisfies ReviewStore and OutboxStore structurally."""
