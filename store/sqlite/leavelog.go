package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// leaveLogConnector opens the driver's connections with SQLite's
// SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE set (see Options.LeaveLog): closing the
// last connection leaves the write-ahead log as it is instead of copying it
// into the database file and deleting it.
type leaveLogConnector struct{ driver.Connector }

func (c leaveLogConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := noCheckpointOnClose(dc); err != nil && !errors.Is(err, errNoHandle) {
		dc.Close()
		return nil, err
	}
	// Without the handle (a driver that changed) the connection still
	// works: closing then checkpoints as without LeaveLog, slower but
	// sound, and TestLeaveLog fails on it.
	return dc, nil
}

// errNoHandle: the driver's connection no longer looks as this package
// expects (a driver upgrade); the connection is kept without the option.
var errNoHandle = errors.New("sqlite: the driver's connection has no database handle to configure (modernc.org/sqlite changed?)")

// noCheckpointOnClose sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on dc, a
// connection of modernc.org/sqlite, which exposes no call for it: its
// sqlite3 handle is read from the connection's db field.
func noCheckpointOnClose(dc driver.Conn) error {
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return errNoHandle
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
		return errNoHandle
	}
	tls := libc.NewTLS()
	defer tls.Close()
	return dbConfigOn(tls, uintptr(f.Uint()), sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE)
}

// dbConfigOn turns on the boolean setting op of the connection db
// (sqlite3_db_config(db, op, int onoff, int *pRes)).
func dbConfigOn(tls *libc.TLS, db uintptr, op int32) error {
	// libc.VaList packs each argument in an 8-byte slot.
	bp := libc.Xmalloc(tls, 16)
	if bp == 0 {
		return errNoMemory
	}
	defer libc.Xfree(tls, bp)
	if rc := sqlite3.Xsqlite3_db_config(tls, db, op, libc.VaList(bp, int32(1), uintptr(0))); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite: sqlite3_db_config(%d) returned %d", op, rc)
	}
	return nil
}
