package sqlite

import (
	"errors"
	"runtime"
	"sync"

	"github.com/scrollback-dev/scrollback/store"
)

// Page reads run on a few goroutines of the DB's own (readers), each with
// a connection of its own (readConn), not on their callers'. A read goes
// deep into SQLite, whose frames are large, and a server calls
// StatReadCopyAt from a goroutine started for the request: its small
// stack would grow, copied each time it doubles, on every read (about a
// sixth of a page read's CPU). A reader's stack has grown once, for all
// its reads.
//
// There are as many readers as the Go scheduler runs goroutines at once
// (GOMAXPROCS), at most Options.MaxOpenConns: a read is CPU work on a
// file the operating system caches, which more readers than processors
// would not make faster, and each connection maps the file's pages
// anew.
type readers struct {
	once sync.Once
	q    chan *readCall
	stop chan struct{} // closed by Close
	shut sync.Once
	wg   sync.WaitGroup // the readers running
}

// close stops the readers, once, and waits for them to close their
// connections.
func (r *readers) close() {
	r.shut.Do(func() { close(r.stop) })
	r.wg.Wait()
}

// readCall is one page read handed to a reader.
type readCall struct {
	session string
	id      string
	p       []byte
	off     int64
	info    store.CopyInfo
	n       int
	err     error
	done    chan struct{}
}

var readCalls = sync.Pool{New: func() any { return &readCall{done: make(chan struct{}, 1)} }}

// errClosed is what a read after Close returns, as database/sql says it.
var errClosed = errors.New("sql: database is closed")

// readOnReader runs readCopyAt on a reader, starting them on the first
// read.
func (d *DB) readOnReader(session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	d.readers.once.Do(func() {
		d.readers.q = make(chan *readCall)
		n := max(1, min(d.maxConns, runtime.GOMAXPROCS(0)))
		d.readers.wg.Add(n)
		for range n {
			go d.reader()
		}
	})
	c := readCalls.Get().(*readCall)
	c.session, c.id, c.p, c.off = session, id, p, off
	select {
	case d.readers.q <- c:
		<-c.done
	case <-d.readers.stop:
		c.err = errClosed
	}
	info, n, err := c.info, c.n, c.err
	*c = readCall{done: c.done}
	readCalls.Put(c)
	return info, n, err
}

// reader runs the reads handed to it until Close, on a connection it
// opens for its first read (and again after one failed to open), and
// closes when it stops.
func (d *DB) reader() {
	defer d.readers.wg.Done()
	var conn *readConn
	defer func() {
		if conn != nil {
			conn.close()
		}
	}()
	for {
		select {
		case c := <-d.readers.q:
			if conn == nil {
				conn, c.err = openReadConn(d.path, d.readOnly, d.immutable, d.leaveLog, d.busyTimeout.Milliseconds())
			}
			if conn != nil {
				c.info, c.n, c.err = d.readCopyAt(conn, c.session, c.id, c.p, c.off)
			}
			c.done <- struct{}{}
		case <-d.readers.stop:
			return
		}
	}
}
