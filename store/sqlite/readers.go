package sqlite

import (
	"context"
	"errors"
	"sync"

	"github.com/scrollback-dev/scrollback/store"
)

// Page reads run on a few goroutines of the DB's own (readers), one per
// connection the pool may open, not on their callers'. A read goes deep
// into SQLite, whose frames are large, and a server calls StatReadCopyAt
// from a goroutine started for the request: its small stack would grow,
// copied each time it doubles, on every read (about a sixth of a page
// read's CPU). A reader's stack has grown once, for all its reads.
type readers struct {
	once sync.Once
	q    chan *readCall
	stop chan struct{} // closed by Close
	shut sync.Once
}

// close stops the readers, once.
func (r *readers) close() { r.shut.Do(func() { close(r.stop) }) }

// readCall is one page read handed to a reader.
type readCall struct {
	ctx     context.Context
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
func (d *DB) readOnReader(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	d.readers.once.Do(func() {
		d.readers.q = make(chan *readCall)
		for range d.maxConns {
			go d.reader()
		}
	})
	c := readCalls.Get().(*readCall)
	c.ctx, c.session, c.id, c.p, c.off = ctx, session, id, p, off
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

// reader runs the reads handed to it until Close.
func (d *DB) reader() {
	for {
		select {
		case c := <-d.readers.q:
			c.info, c.n, c.err = d.readCopyAt(c.ctx, c.session, c.id, c.p, c.off)
			c.done <- struct{}{}
		case <-d.readers.stop:
			return
		}
	}
}
