// Package postgres is the PostgreSQL backend of store.Store, for running
// several scrollback servers on one shared database: a session made through
// one instance, and the copies saved in it, can be read through any other.
//
// Open takes a postgres:// URL (as pgx parses it, pool_max_conns and the
// other pool_* parameters included), connects through a pgxpool connection
// pool and applies the schema migrations this program knows, one
// transaction under an advisory lock, so that instances starting together
// migrate exactly once. The schema mirrors store/sqlite's: sessions,
// default_sessions, copies, and chunks of store.ChunkSize bytes, each
// deletion cascading down; schema_migrations records the versions applied.
//
// A copy is saved in one transaction, its chunks streamed with COPY FROM
// through one reused buffer, so it becomes visible only when whole and a
// writer that dies midway leaves nothing behind. A page read is one query
// that returns only the requested bytes of the one or two chunks holding
// them.
//
// Quotas are enforced in the save's transaction (see SetLimits). After a
// save that evicted, or a deletion, a VACUUM of the chunks' TOAST table
// runs in the background, at most one per DB at a time, so that the next
// saves reuse the freed space and the database stays near its quotas
// instead of growing until autovacuum comes by; nothing waits for it
// (see SetVacuumErrorLog and VacuumStats).
//
// Failures of the database itself are *Error values naming the operation
// and the server, with a hint; a server that is down or a connection that
// was lost matches ErrUnavailable. The pool reconnects on its own, and
// idempotent calls are retried once on a fresh connection, so service
// resumes as soon as the server is back.
package postgres
