package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations is the ordered schema history. migrations[i] takes the schema
// from version i to version i+1 and is recorded as row i+1 of
// schema_migrations in the same transaction. Append, never edit.
//
// Owners, tools and sources are BYTEA, not TEXT: they are whatever bytes the
// caller gave (a command line may hold a NUL byte or invalid UTF-8, which
// TEXT refuses), and the store must give them back exactly, as SQLite does.
var migrations = []string{
	// 1: sessions, default sessions, copies and their chunks. Deleting a
	// session cascades to its default-session row, its copies and their
	// chunks. A session's parent is not a foreign key: a fork outlives its
	// parent.
	`
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	owner      BYTEA NOT NULL,
	parent     TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX sessions_owner ON sessions (owner, created_at);

CREATE TABLE default_sessions (
	owner   BYTEA PRIMARY KEY,
	session TEXT NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE
);

CREATE TABLE copies (
	pk            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	session       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	id            TEXT NOT NULL UNIQUE,
	tool          BYTEA NOT NULL,
	source        BYTEA NOT NULL,
	total_bytes   BIGINT NOT NULL,
	lines         BIGINT NOT NULL,
	complete      BOOLEAN NOT NULL,
	omitted_bytes BIGINT NOT NULL,
	omitted_lines BIGINT NOT NULL,
	created_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX copies_session ON copies (session, created_at);

-- Chunk seq holds bytes [seq*65536, (seq+1)*65536) of its copy; every chunk
-- but the last is exactly 65536 bytes (store.ChunkSize) long.
CREATE TABLE chunks (
	copy BIGINT NOT NULL REFERENCES copies (pk) ON DELETE CASCADE,
	seq  INTEGER NOT NULL,
	data BYTEA NOT NULL,
	PRIMARY KEY (copy, seq)
);
-- Uncompressed out-of-line storage: substring() of a chunk then reads only
-- the TOAST pieces holding the requested bytes, so a 4 KiB page costs a
-- few small reads instead of decompressing 64 KiB.
ALTER TABLE chunks ALTER COLUMN data SET STORAGE EXTERNAL;
`,
	// 2: storage that lives for months, as in store/sqlite's version 2.
	// Chunks carry their codec (0 raw, 1 zstd, 2 zstd frames: see chunkcodec; version 1's are all raw):
	// a compressed chunk is read whole and decompressed by the client, a
	// raw one still by substring. Copies know their stored size (the
	// chunks' lengths) and last read, which orders eviction; sessions know
	// their last use, which retention goes by. Evicted copies leave their
	// id and time; counters keep the totals stats reports.
	`
ALTER TABLE chunks ADD COLUMN codec SMALLINT NOT NULL DEFAULT 0;

ALTER TABLE copies ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE copies ADD COLUMN last_read_at TIMESTAMPTZ;
UPDATE copies SET last_read_at = created_at,
	stored_bytes = coalesce((SELECT sum(octet_length(data)) FROM chunks WHERE copy = copies.pk), 0);
ALTER TABLE copies ALTER COLUMN last_read_at SET NOT NULL,
	ALTER COLUMN last_read_at SET DEFAULT clock_timestamp();
CREATE INDEX copies_lru ON copies (last_read_at, pk);
CREATE INDEX copies_session_lru ON copies (session, last_read_at, pk);
-- A copy being saved in pieces (store.PendingCopy) is pending until
-- finished: no query but its own sees it. last_read_at is its heartbeat.
ALTER TABLE copies ADD COLUMN pending BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX copies_pending ON copies (last_read_at) WHERE pending;

ALTER TABLE sessions ADD COLUMN last_used_at TIMESTAMPTZ;
UPDATE sessions SET last_used_at = greatest(created_at,
	(SELECT max(created_at) FROM copies WHERE session = sessions.id));
ALTER TABLE sessions ALTER COLUMN last_used_at SET NOT NULL,
	ALTER COLUMN last_used_at SET DEFAULT clock_timestamp();
CREATE INDEX sessions_last_used ON sessions (last_used_at);

CREATE TABLE evicted (
	id      TEXT PRIMARY KEY,
	session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	at      TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX evicted_session ON evicted (session);

CREATE TABLE counters (
	name  TEXT PRIMARY KEY,
	value BIGINT NOT NULL
);
INSERT INTO counters (name, value) VALUES ('evictions', 0), ('retention_deletions', 0);
`,
	// 3: autovacuum of the chunks (and of their TOAST table, where the
	// bytes are) runs unthrottled, as the VACUUM each instance runs after
	// it evicts or deletes does (see vacuumer). Throttled, an autovacuum
	// of a large TOAST table takes seconds, and that VACUUM waits behind
	// it for a deadlock_timeout before PostgreSQL cancels it: a stall
	// during which the saves grow the files instead of reusing space.
	`
ALTER TABLE chunks SET (autovacuum_vacuum_cost_delay = 0, toast.autovacuum_vacuum_cost_delay = 0);
`,
	// 4: the latest save that failed for a reason of the database's own
	// (a full disk, mostly), which stats reports: one row, replaced by each
	// failure, as in store/sqlite's version 3.
	`
CREATE TABLE save_failures (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	at      TIMESTAMPTZ NOT NULL,
	session TEXT NOT NULL,
	error   TEXT NOT NULL,
	"full"  BOOLEAN NOT NULL
);
`,
}

// migrationLock is the pg_advisory_xact_lock key that serialises migrations
// between processes: "scrollback" in ASCII, as a number.
const migrationLock = 0x7363726f6c6c6261

// migrate brings the schema up to date in one transaction holding
// migrationLock, so two instances starting at once apply each migration
// exactly once: the second waits for the first, then finds nothing to do.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return migrateWith(ctx, pool, migrations)
}

// migrateWith applies the history migrations; the migration test gives it
// the first versions only, to make a database as an older release did.
func migrateWith(ctx context.Context, pool *pgxpool.Pool, migrations []string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// An instance starting beside one that migrates waits for it
		// however long the migration takes: lock_timeout is for saves.
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = 0"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLock)); err != nil {
			return err
		}
		// Created only when missing: even CREATE ... IF NOT EXISTS needs
		// the CREATE privilege on the schema, which a user that was only
		// granted the tables of a migrated database (a team's usual
		// set-up: one role owns the schema, the servers connect as
		// another) does not have.
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass('schema_migrations') IS NOT NULL").Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE TABLE schema_migrations (
	version    INTEGER PRIMARY KEY,
	applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`); err != nil {
				return err
			}
		}
		var version int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&version); err != nil {
			return err
		}
		if version > len(migrations) {
			return fmt.Errorf("%w: schema version %d, this program knows up to %d", ErrNewerSchema, version, len(migrations))
		}
		for i := version; i < len(migrations); i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", i+1); err != nil {
				return err
			}
		}
		return nil
	})
}
