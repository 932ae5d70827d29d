package sqlite

import (
	"fmt"
	"net/url"
	"strconv"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/scrollback-dev/scrollback/store"
)

// readConn is a page reader's own connection to the file, opened and run
// through SQLite's C API as modernc.org/sqlite translates it (its lib
// package), not through database/sql and the driver. A page read is one
// indexed query of a few rows, and around SQLite's own work the two
// layers cost a third again: database/sql finding a connection and the
// statement prepared on it, the driver naming the columns and copying
// each row's blob onto the Go heap, and binding the ids in C memory
// allocated and freed on every call. Here the statements are prepared
// once, the ids are bound from one buffer, and a chunk's stored bytes are
// decompressed, or copied, straight from SQLite's memory.
//
// Each reader keeps its connection, so the file's pages it maps (PRAGMA
// mmap_size) stay mapped for its next reads: the pool handed reads to all
// its connections in turn, each mapping every page anew, and on a virtual
// machine those page faults were about a fifth of a page read's CPU in a
// server under load (docs/mcp.md).
//
// A readConn is used by one goroutine at a time (SQLITE_OPEN_NOMUTEX).
type readConn struct {
	tls    *libc.TLS
	db     uintptr
	chunks uintptr // the page's chunks with the copy's info (readChunksSQL)
	page   uintptr // the page's chunks alone (readPageSQL)
	ids    uintptr // C memory the session and copy ids are bound from
	idsCap int
}

// The page read's queries. One row per chunk covering [off, end), each
// with its seq and codec. A raw chunk comes as the part of it in range,
// cut by substr() (1-based start, length), so that only the bytes asked
// for leave SQLite; a compressed one comes whole, to be decompressed and
// cut here. A copy with no chunk in range (off == size) still yields one
// row, seq NULL. readChunksSQL starts every row with the copy's info (but
// its id and session, which are the arguments), so that a page read
// (StatReadCopyAt) is one query; once the info is known (see infos),
// readPageSQL, the same query without it, does.
// ?1 session, ?2 id, ?3 first seq, ?4 last seq, ?5 off, ?6 end.
var readChunksSQL, readPageSQL = func() (string, string) {
	c := strconv.Itoa(store.ChunkSize)
	chunkCols := `k.seq, k.codec,
			CASE k.codec WHEN 0 THEN substr(k.data, max(?5 - k.seq*` + c + `, 0) + 1,
				min(?6 - k.seq*` + c + `, length(k.data)) - max(?5 - k.seq*` + c + `, 0))
			ELSE k.data END`
	from := `
		FROM copies c LEFT JOIN chunks k ON k.copy = c.pk AND k.seq BETWEEN ?3 AND ?4
		WHERE c.session = ?1 AND c.id = ?2 AND NOT c.pending
		ORDER BY k.seq`
	return `SELECT c.tool, c.source, c.total_bytes, c.lines, c.complete, c.omitted_bytes, c.omitted_lines, c.created_at,
			` + chunkCols + from, `SELECT ` + chunkCols + from
}()

// infoCols is how many columns of readChunksSQL come before the chunk's.
const infoCols = 8

// libError is a failure SQLite reported on a readConn: its extended
// result code and message. Code matches the driver's *sqlite.Error, so
// that wrap and isBusy classify both alike.
type libError struct {
	code int
	msg  string
}

func (e *libError) Error() string { return e.msg }

// Code returns SQLite's extended result code.
func (e *libError) Code() int { return e.code }

// openReadConn opens a reader's connection to the database at path,
// already created and migrated by Open: read-only in SQLite's sense when
// readOnly (mode=ro; immutable=1 with immutable), else read-write but refusing writes (PRAGMA
// query_only), with the busy timeout and memory map of the pool's
// connections, and, with leaveLog, leaving the write-ahead log on close
// as they do (see Options.LeaveLog).
func openReadConn(path string, readOnly, immutable, leaveLog bool, busyTimeoutMs int64) (_ *readConn, err error) {
	c := &readConn{tls: libc.NewTLS()}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	flags := int32(sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_NOMUTEX)
	if readOnly {
		flags = sqlite3.SQLITE_OPEN_READONLY | sqlite3.SQLITE_OPEN_NOMUTEX
	}
	if immutable {
		// As Open's pool has it (see DB.immutable).
		u := url.URL{Scheme: "file", Path: path, RawQuery: "immutable=1"}
		path = u.String()
		flags |= sqlite3.SQLITE_OPEN_URI
	}
	name, err := libc.CString(path)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(c.tls, name)
	pdb := libc.Xcalloc(c.tls, 1, 8)
	if pdb == 0 {
		return nil, errNoMemory
	}
	defer libc.Xfree(c.tls, pdb)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, pdb, flags, 0)
	c.db = libc.AtomicLoadPUintptr(pdb)
	if rc != sqlite3.SQLITE_OK {
		return nil, c.err(rc)
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	if rc := sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, int32(min(busyTimeoutMs, 1<<31-1))); rc != sqlite3.SQLITE_OK {
		return nil, c.err(rc)
	}
	pragmas := "PRAGMA query_only = 1;"
	if mmapSize > 0 {
		pragmas += "PRAGMA mmap_size = " + strconv.FormatInt(mmapSize, 10) + ";"
	}
	if err := c.exec(pragmas); err != nil {
		return nil, err
	}
	if leaveLog {
		if err := dbConfigOn(c.tls, c.db, sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE); err != nil {
			return nil, err
		}
	}
	if c.chunks, err = c.prepare(readChunksSQL); err != nil {
		return nil, err
	}
	if c.page, err = c.prepare(readPageSQL); err != nil {
		return nil, err
	}
	return c, nil
}

var errNoMemory = &libError{code: sqlite3.SQLITE_NOMEM, msg: "sqlite: out of memory"}

// close finalizes the statements and closes the connection.
func (c *readConn) close() {
	for _, s := range []uintptr{c.chunks, c.page} {
		if s != 0 {
			sqlite3.Xsqlite3_finalize(c.tls, s)
		}
	}
	c.chunks, c.page = 0, 0
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	if c.ids != 0 {
		libc.Xfree(c.tls, c.ids)
		c.ids = 0
	}
	c.tls.Close()
}

// err is the error for result code rc of the last call on c.db.
func (c *readConn) err(rc int32) error {
	code := int(rc)
	if c.db != 0 {
		if ext := sqlite3.Xsqlite3_extended_errcode(c.tls, c.db); ext&0xff == rc&0xff {
			code = int(ext)
		}
	}
	msg := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	if c.db != 0 {
		if m := libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db)); m != "" && m != msg {
			msg += ": " + m
		}
	}
	return &libError{code: code, msg: fmt.Sprintf("%s (%d)", msg, code)}
}

func (c *readConn) exec(sql string) error {
	z, err := libc.CString(sql)
	if err != nil {
		return err
	}
	defer libc.Xfree(c.tls, z)
	if rc := sqlite3.Xsqlite3_exec(c.tls, c.db, z, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return c.err(rc)
	}
	return nil
}

func (c *readConn) prepare(sql string) (uintptr, error) {
	z, err := libc.CString(sql)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, z)
	ps := libc.Xcalloc(c.tls, 1, 8)
	if ps == 0 {
		return 0, errNoMemory
	}
	defer libc.Xfree(c.tls, ps)
	if rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, ps, 0); rc != sqlite3.SQLITE_OK {
		return 0, c.err(rc)
	}
	return libc.AtomicLoadPUintptr(ps), nil
}

// bindIDs binds session and id to ?1 and ?2 of stmt, from c.ids, which
// holds them until the next call (SQLITE_STATIC: SQLite does not copy
// them).
func (c *readConn) bindIDs(stmt uintptr, session, id string) error {
	if need := len(session) + len(id); need > c.idsCap {
		if c.ids != 0 {
			libc.Xfree(c.tls, c.ids)
			c.ids, c.idsCap = 0, 0
		}
		if c.ids = libc.Xmalloc(c.tls, types.Size_t(max(need, 64))); c.ids == 0 {
			return errNoMemory
		}
		c.idsCap = max(need, 64)
	}
	buf := cBytes(c.ids, c.idsCap)
	copy(buf, session)
	copy(buf[len(session):], id)
	if rc := sqlite3.Xsqlite3_bind_text(c.tls, stmt, 1, c.ids, int32(len(session)), sqlite3.SQLITE_STATIC); rc != sqlite3.SQLITE_OK {
		return c.err(rc)
	}
	if rc := sqlite3.Xsqlite3_bind_text(c.tls, stmt, 2, c.ids+uintptr(len(session)), int32(len(id)), sqlite3.SQLITE_STATIC); rc != sqlite3.SQLITE_OK {
		return c.err(rc)
	}
	return nil
}

// start binds the arguments of stmt (readChunksSQL or readPageSQL) for
// the page [off, end) of copy id in session, chunks first to last. The
// caller then steps it and resets it.
func (c *readConn) start(stmt uintptr, session, id string, first, last, off, end int64) error {
	if err := c.bindIDs(stmt, session, id); err != nil {
		return err
	}
	for i, v := range [...]int64{first, last, off, end} {
		if rc := sqlite3.Xsqlite3_bind_int64(c.tls, stmt, int32(3+i), v); rc != sqlite3.SQLITE_OK {
			return c.err(rc)
		}
	}
	return nil
}

// step moves stmt to its next row, and reports whether there is one.
func (c *readConn) step(stmt uintptr) (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(c.tls, stmt); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, c.err(rc)
	}
}

// reset ends stmt's run and its read transaction. The bound values stay,
// to be replaced by the next run's.
func (c *readConn) reset(stmt uintptr) error {
	if rc := sqlite3.Xsqlite3_reset(c.tls, stmt); rc != sqlite3.SQLITE_OK {
		return c.err(rc)
	}
	return nil
}

// int64At, nullAt, textAt and blobAt read column i of stmt's current row.
func (c *readConn) int64At(stmt uintptr, i int) int64 {
	return sqlite3.Xsqlite3_column_int64(c.tls, stmt, int32(i))
}

func (c *readConn) nullAt(stmt uintptr, i int) bool {
	return sqlite3.Xsqlite3_column_type(c.tls, stmt, int32(i)) == sqlite3.SQLITE_NULL
}

func (c *readConn) textAt(stmt uintptr, i int) string {
	p := sqlite3.Xsqlite3_column_text(c.tls, stmt, int32(i))
	n := sqlite3.Xsqlite3_column_bytes(c.tls, stmt, int32(i))
	if p == 0 || n <= 0 {
		return ""
	}
	return string(cBytes(p, int(n)))
}

// blobAt returns column i as SQLite holds it: valid until the next step
// or reset.
func (c *readConn) blobAt(stmt uintptr, i int) []byte {
	p := sqlite3.Xsqlite3_column_blob(c.tls, stmt, int32(i))
	n := sqlite3.Xsqlite3_column_bytes(c.tls, stmt, int32(i))
	if p == 0 || n <= 0 {
		return nil
	}
	return cBytes(p, int(n))
}

// cBytes returns the n bytes at address p as a slice, without copying
// them. p is C memory: SQLite's, or what modernc.org/libc allocated,
// outside Go's heap, so that the garbage collector neither moves nor
// frees it; the slice is valid for as long as SQLite keeps it.
func cBytes(p uintptr, n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(nil, p)), n)
}
