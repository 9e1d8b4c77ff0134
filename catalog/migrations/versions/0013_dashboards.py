"""Dashboards: each user's named pages of result panels (``catalog.dashboards``).

A user's preferences, not security objects: no snapshot holds them, and they go with their
user (ON DELETE CASCADE), so a user id never reused cannot hand them to someone else.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"

INT = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
FLOAT: sa.types.TypeEngine[float] = sa.REAL().with_variant(sa.DOUBLE_PRECISION(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "dashboards",
        sa.Column("user_id", INT, nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("panels", sa.Text(), nullable=False),
        sa.Column("changed_at", FLOAT, nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("dashboards")
