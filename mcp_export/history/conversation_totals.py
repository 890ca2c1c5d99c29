"""A conversation's totals that follow the rule of a total: its calls' cost, and whether its
token counts are lower bounds. History schema version 8, on SQLite and on PostgreSQL.

Each run row keeps what its call cost (``runs.cost_usd``: US dollars, NULL unknown;
``cost_at_least``: a lower bound), worked out when the call ends (``server/cost.py``). Each
thread row keeps, by triggers whoever writes:

- ``calls``: its runs that ended (a run may be written ended at once: the background writer
  applies its start and its end as one insert);
- ``cost_usd``: the sum of their costs that are known (NULL: none is);
- ``cost_unsure``: those of them whose cost is unknown or a lower bound, so the total is
  ``costs.cost.Cost.total``'s: a lower bound when one is unsure, unknown when none is known;
- ``tokens_unreported``: its model requests (assistant messages that completed) without a
  token count, so the conversation's token sums (``history/figures.py``) read ``≥ N`` when some
  request did not report its count and others did, and unknown when none did.

Rows written before version 8 are counted once when the database is upgraded; their runs' cost
was not recorded: unknown.
"""

from __future__ import annotations

from mcp_export.history.figures import STATUS_AGAIN, WORST_STATUS

__all__ = ["PG_TOTALS", "SQLITE_COLUMNS", "SQLITE_TOTALS"]

# A message that is a model request that reported no count (1) or not (0).
_UNREPORTED = """(CASE WHEN {m}.role = 'assistant' AND {m}.status = 'complete'
    AND ({m}.tokens_in IS NULL OR {m}.tokens_out IS NULL) THEN 1 ELSE 0 END)"""
# A run that ended (1) or not (0); its cost when it ended (NULL: unknown, or not ended).
_ENDED = "(CASE WHEN {r}.status <> 'pending' THEN 1 ELSE 0 END)"
_COST = "(CASE WHEN {r}.status <> 'pending' THEN {r}.cost_usd END)"
# A run that ended without an exact cost (1) or not (0).
_UNSURE = """(CASE WHEN {r}.status <> 'pending' AND ({r}.cost_usd IS NULL OR {r}.cost_at_least <> 0)
    THEN 1 ELSE 0 END)"""


def _cost_changed(same: str) -> str:
    """The thread's known cost once a run's cost (what it adds) changed from OLD's to NEW's."""
    new, old = _COST.format(r="NEW"), _COST.format(r="OLD")
    return f"""CASE WHEN {new} {same} {old} THEN cost_usd
            WHEN {new} IS NULL THEN cost_usd - {old}
            ELSE coalesce(cost_usd, 0) - coalesce({old}, 0) + {new} END"""


def _run_totals(same: str) -> str:
    return f"""
        calls = calls + {_ENDED.format(r="NEW")} - {_ENDED.format(r="OLD")},
        cost_usd = {_cost_changed(same)},
        cost_unsure = cost_unsure + {_UNSURE.format(r="NEW")} - {_UNSURE.format(r="OLD")}"""


_ADDED = "CASE WHEN NEW.{c} IS NULL THEN {c} ELSE coalesce({c}, 0) + NEW.{c} END"
# A run written when it had ended already (its start and end applied as one insert).
_RUN_ADDED = f"""
        calls = calls + 1,
        cost_usd = {_ADDED.format(c="cost_usd")},
        cost_unsure = cost_unsure + {_UNSURE.format(r="NEW")}"""
_BACKFILL = f"""
UPDATE threads SET
    tokens_unreported = (SELECT count(*) FROM messages AS m WHERE m.thread_id = threads.id
                         AND {_UNREPORTED.format(m="m")} = 1),
    calls = (SELECT count(*) FROM runs AS r WHERE r.thread_id = threads.id
             AND r.status <> 'pending'),
    cost_unsure = (SELECT count(*) FROM runs AS r WHERE r.thread_id = threads.id
                   AND r.status <> 'pending');
"""

_SQLITE_CHANGED = """CASE WHEN NEW.{c} IS OLD.{c} THEN {c}
            ELSE coalesce({c}, 0) - coalesce(OLD.{c}, 0) + NEW.{c} END"""

SQLITE_COLUMNS = (
    ("runs", "cost_usd", "REAL"),
    ("runs", "cost_at_least", "INTEGER NOT NULL DEFAULT 0"),
    ("threads", "calls", "INTEGER NOT NULL DEFAULT 0"),
    ("threads", "cost_usd", "REAL"),
    ("threads", "cost_unsure", "INTEGER NOT NULL DEFAULT 0"),
    ("threads", "tokens_unreported", "INTEGER NOT NULL DEFAULT 0"),
)
"""Version 8's columns on SQLite: (table, column, declaration), each added where it is missing."""

SQLITE_TOTALS = f"""{_BACKFILL}
DROP TRIGGER IF EXISTS thread_message_added;
DROP TRIGGER IF EXISTS thread_message_changed;
DROP TRIGGER IF EXISTS thread_run_cost;
DROP TRIGGER IF EXISTS thread_run_cost_added;
CREATE TRIGGER thread_message_added AFTER INSERT ON messages BEGIN
    UPDATE threads SET
        updated_at = NEW.created_at,
        tokens_in = {_ADDED.format(c="tokens_in")},
        tokens_out = {_ADDED.format(c="tokens_out")},
        tokens_unreported = tokens_unreported + {_UNREPORTED.format(m="NEW")},
        status = {WORST_STATUS.format(a="status", b="NEW.status")}
    WHERE id = NEW.thread_id;
END;
CREATE TRIGGER thread_message_changed AFTER UPDATE OF status, tokens_in, tokens_out
ON messages BEGIN
    UPDATE threads SET
        tokens_in = {_SQLITE_CHANGED.format(c="tokens_in")},
        tokens_out = {_SQLITE_CHANGED.format(c="tokens_out")},
        tokens_unreported = tokens_unreported + {_UNREPORTED.format(m="NEW")}
            - {_UNREPORTED.format(m="OLD")},
        status = CASE WHEN NEW.status IS OLD.status THEN status ELSE {STATUS_AGAIN} END
    WHERE id = NEW.thread_id;
END;
CREATE TRIGGER thread_run_cost AFTER UPDATE OF status, cost_usd, cost_at_least ON runs
WHEN NEW.thread_id IS NOT NULL BEGIN
    UPDATE threads SET{_run_totals("IS")}
    WHERE id = NEW.thread_id;
END;
CREATE TRIGGER thread_run_cost_added AFTER INSERT ON runs
WHEN NEW.thread_id IS NOT NULL AND NEW.status <> 'pending' BEGIN
    UPDATE threads SET{_RUN_ADDED}
    WHERE id = NEW.thread_id;
END;
"""
"""Version 8 on SQLite after its columns: their values for the rows there are, and the triggers
(the message triggers of version 3, ``history/figures.py``, with the unreported requests)."""

_PG_CHANGED = """CASE WHEN NEW.{c} IS NOT DISTINCT FROM OLD.{c} THEN {c}
            ELSE coalesce({c}, 0) - coalesce(OLD.{c}, 0) + NEW.{c} END"""
_PG_TIME_ADDED = """CASE WHEN NEW.answer_ms IS NULL THEN duration_ms
            ELSE coalesce(duration_ms, 0) + NEW.answer_ms END"""

_PG_COLUMNS = """
ALTER TABLE runs ADD COLUMN IF NOT EXISTS cost_usd double precision;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS cost_at_least integer NOT NULL DEFAULT 0;
ALTER TABLE threads ADD COLUMN IF NOT EXISTS calls bigint NOT NULL DEFAULT 0;
ALTER TABLE threads ADD COLUMN IF NOT EXISTS cost_usd double precision;
ALTER TABLE threads ADD COLUMN IF NOT EXISTS cost_unsure bigint NOT NULL DEFAULT 0;
ALTER TABLE threads ADD COLUMN IF NOT EXISTS tokens_unreported bigint NOT NULL DEFAULT 0;
"""

_PG_TRIGGERS = f"""
CREATE OR REPLACE FUNCTION history_message_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE threads SET
        updated_at = NEW.created_at,
        tokens_in = {_ADDED.format(c="tokens_in")},
        tokens_out = {_ADDED.format(c="tokens_out")},
        tokens_unreported = tokens_unreported + {_UNREPORTED.format(m="NEW")},
        status = {WORST_STATUS.format(a="status", b="NEW.status")},
        duration_ms = {_PG_TIME_ADDED}
    WHERE id = NEW.thread_id;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION history_message_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE threads SET
        tokens_in = {_PG_CHANGED.format(c="tokens_in")},
        tokens_out = {_PG_CHANGED.format(c="tokens_out")},
        tokens_unreported = tokens_unreported + {_UNREPORTED.format(m="NEW")}
            - {_UNREPORTED.format(m="OLD")},
        status = CASE WHEN NEW.status IS NOT DISTINCT FROM OLD.status THEN status
                 ELSE {STATUS_AGAIN} END,
        duration_ms = CASE WHEN NEW.answer_ms IS NOT DISTINCT FROM OLD.answer_ms THEN duration_ms
                      ELSE {_PG_TIME_ADDED} END
    WHERE id = NEW.thread_id;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION history_run_cost() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE threads SET{_run_totals("IS NOT DISTINCT FROM")}
    WHERE id = NEW.thread_id;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS thread_run_cost ON runs;
CREATE TRIGGER thread_run_cost AFTER UPDATE OF status, cost_usd, cost_at_least ON runs
FOR EACH ROW WHEN (NEW.thread_id IS NOT NULL) EXECUTE FUNCTION history_run_cost();

CREATE OR REPLACE FUNCTION history_run_cost_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE threads SET{_RUN_ADDED}
    WHERE id = NEW.thread_id;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS thread_run_cost_added ON runs;
CREATE TRIGGER thread_run_cost_added AFTER INSERT ON runs
FOR EACH ROW WHEN (NEW.thread_id IS NOT NULL AND NEW.status <> 'pending')
EXECUTE FUNCTION history_run_cost_added();
"""

PG_TOTALS = _PG_COLUMNS + _BACKFILL + _PG_TRIGGERS
"""Version 8 on PostgreSQL (``history/pg_schema.py``): the same columns, values and rules; the
message functions of ``pg_schema`` replaced by ones that also count the unreported requests.
It can run on a database that has it already (a new database gets it after the tables)."""
