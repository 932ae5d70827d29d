package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"
)

// migrations is the ordered schema history. migrations[i] takes the schema
// from version i to version i+1; the version is kept in PRAGMA user_version,
// which changes in the same transaction as the schema. Append, never edit.
var migrations = []string{
	// 1: sessions, default sessions, copies and their chunks. Deleting a
	// session cascades to its copies and their chunks. A session's parent
	// is not a foreign key: a fork outlives its parent.
	`
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	parent     TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL -- unix nanoseconds
);
CREATE INDEX sessions_owner ON sessions (owner, created_at);

CREATE TABLE default_sessions (
	owner   TEXT PRIMARY KEY,
	session TEXT NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE
);

CREATE TABLE copies (
	pk            INTEGER PRIMARY KEY,
	session       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	id            TEXT NOT NULL UNIQUE,
	tool          TEXT NOT NULL,
	source        TEXT NOT NULL,
	total_bytes   INTEGER NOT NULL,
	lines         INTEGER NOT NULL,
	complete      INTEGER NOT NULL,
	omitted_bytes INTEGER NOT NULL,
	omitted_lines INTEGER NOT NULL,
	created_at    INTEGER NOT NULL -- unix nanoseconds
);
CREATE INDEX copies_session ON copies (session);

-- Chunk seq holds bytes [seq*ChunkSize, (seq+1)*ChunkSize) of its copy; every
-- chunk but the last is exactly ChunkSize long.
CREATE TABLE chunks (
	copy INTEGER NOT NULL REFERENCES copies (pk) ON DELETE CASCADE,
	seq  INTEGER NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (copy, seq)
);
`,
	// 2: storage that lives for months. Chunks carry their codec (0 raw,
	// 1 zstd, 2 zstd frames: see chunkcodec; version 1's chunks are all raw). Copies know what they take
	// in the file (stored_bytes, the chunks' lengths) and when they were
	// last read, which orders eviction; sessions know when they were last
	// used, which retention goes by. Evicted copies leave their id and
	// time behind so that reading one says so; counters keep the totals
	// stats reports.
	`
ALTER TABLE chunks ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;

ALTER TABLE copies ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE copies ADD COLUMN last_read_at INTEGER NOT NULL DEFAULT 0;
UPDATE copies SET last_read_at = created_at,
	stored_bytes = (SELECT coalesce(sum(length(data)), 0) FROM chunks WHERE copy = copies.pk);
CREATE INDEX copies_lru ON copies (last_read_at, pk);
CREATE INDEX copies_session_lru ON copies (session, last_read_at, pk);
-- A copy being saved in pieces (store.PendingCopy) is pending until
-- finished: no query but its own sees it. last_read_at is its heartbeat.
ALTER TABLE copies ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
CREATE INDEX copies_pending ON copies (last_read_at) WHERE pending;

ALTER TABLE sessions ADD COLUMN last_used_at INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET last_used_at = max(created_at,
	coalesce((SELECT max(created_at) FROM copies WHERE session = sessions.id), 0));
CREATE INDEX sessions_last_used ON sessions (last_used_at);

CREATE TABLE evicted (
	id      TEXT PRIMARY KEY,
	session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	at      INTEGER NOT NULL -- unix nanoseconds
);
CREATE INDEX evicted_session ON evicted (session);

CREATE TABLE counters (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
);
INSERT INTO counters (name, value) VALUES ('evictions', 0), ('retention_deletions', 0);
`,
	// 3: the latest save that failed for a reason of the database's own
	// (a full disk, mostly), which stats reports to later processes: one
	// row, replaced by each failure.
	`
CREATE TABLE save_failures (
	id      INTEGER PRIMARY KEY CHECK (id = 1),
	at      INTEGER NOT NULL, -- unix nanoseconds
	session TEXT NOT NULL,
	error   TEXT NOT NULL,
	full    INTEGER NOT NULL
);
`,
}

// migrate brings the schema up to date. It runs in one BEGIN IMMEDIATE
// transaction (the pool's _txlock), so two processes opening a new database
// at once apply each migration exactly once: the second waits for the first
// and then finds nothing left to do.
func migrate(ctx context.Context, db *sql.DB) error {
	// Up to date, the common case, is found without the write lock that
	// every transaction here takes (_txlock=immediate): an Open must not
	// queue behind other processes' saves only to find nothing to do.
	var current int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return err
	}
	if current == len(migrations) {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("%w: schema version %d, this program knows up to %d", ErrNewerSchema, version, len(migrations))
	}
	if version == len(migrations) {
		return nil
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is a trusted integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}

// checkSchema verifies, for a read-only database, that the schema is one this
// program can read.
func checkSchema(ctx context.Context, db *sql.DB) error {
	version, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	if version < len(migrations) {
		return fmt.Errorf("%w: schema version %d is older than %d and cannot be upgraded read-only", ErrReadOnly, version, len(migrations))
	}
	return nil
}

// errForeign: the file is an SQLite database of another program.
var errForeign = errors.New("not a scrollback database")

// schemaVersion returns the schema version of the database, without
// writing anything: an error wrapping ErrNewerSchema for a version this
// program does not know, or errForeign for another program's database (a
// mistyped --db), so that Open refuses both before it changes the file.
// A scrollback database has no tables at version 0 (the first migration
// makes them and sets the version in one transaction), and has its
// sessions and copies tables from version 1 on.
func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	// One statement, one snapshot: a process making the schema meanwhile
	// commits its tables and its version at once.
	rows, err := db.QueryContext(ctx, `SELECT v.user_version, s.name FROM pragma_user_version AS v
LEFT JOIN sqlite_schema AS s ON s.type = 'table' AND s.name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY s.name`)
	if err != nil {
		return 0, err
	}
	var version int
	var tables []string
	for rows.Next() {
		var name sql.NullString
		if err := rows.Scan(&version, &name); err != nil {
			rows.Close()
			return 0, err
		}
		if name.Valid {
			tables = append(tables, name.String)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	ours := slices.Contains(tables, "sessions") && slices.Contains(tables, "copies")
	switch {
	case version == 0 && len(tables) > 0, version > 0 && !ours:
		if len(tables) > 5 {
			tables = append(tables[:5], "...")
		}
		return 0, fmt.Errorf("%w: it holds another program's tables (%s)", errForeign, strings.Join(tables, ", "))
	case version > len(migrations):
		return 0, fmt.Errorf("%w: schema version %d, this program knows up to %d", ErrNewerSchema, version, len(migrations))
	}
	return version, nil
}

// incrementalVacuum turns on incremental auto-vacuum, which lets
// DeleteSession give freed pages back to the file system. The setting
// only takes effect through a VACUUM once the file has pages (switching to
// WAL mode already writes the first), so it is not in the DSN (where it
// would also cost every new connection a write transaction): it is checked
// once per Open, and a database without it, new or old, is vacuumed once.
// On a new database the VACUUM is instant.
func incrementalVacuum(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mode int
	if err := conn.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return err
	}
	const incremental = 2
	if mode == incremental {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "VACUUM"); err != nil {
		var se sqliteError
		if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
			// The VACUUM needs as much free space again as the database:
			// without it the database still works, only deleted sessions'
			// pages stay free in the file. A later open tries again; what
			// the failed VACUUM wrote to the log is given back now.
			conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
			return nil
		}
		return fmt.Errorf("vacuum to enable incremental auto-vacuum: %w", err)
	}
	return nil
}
