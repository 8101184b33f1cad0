"""episodes: fillfactor 70, so the hourly decay pass rewrites weights in place (HOT)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 19:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every hourly decay pass rewrites the weight of every hot episode. A HOT update (the new version on
    # the same page, no new index entries) needs free room on that page; at the default fillfactor 100
    # there is none, so each of those rewrites added an entry to every index of the table.
    # `hindsight bench decay`, 1M rows, two steady hourly passes over ~359k hot rows (1 h apart):
    #   fillfactor 100: 0% / 1% HOT, 13.9 s / 14.2 s     fillfactor 90: 37% / 46% HOT, 12.0 s / 10.8 s
    #   fillfactor  80: 64% / 78% HOT, 7.7 s / 7.5 s     fillfactor 70: 81% / 95% HOT, 6.8 s / 5.2 s
    # After those passes the table was only ~10% bigger than at 100 (62k vs 68k pages): non-HOT rewrites
    # leave dead versions behind too. Existing full pages get room only as their rows move; VACUUM FULL episodes
    # (an exclusive lock) would apply it at once.
    op.execute("ALTER TABLE episodes SET (fillfactor = 70)")


def downgrade() -> None:
    op.execute("ALTER TABLE episodes RESET (fillfactor)")
