package scrollback

import (
	"context"
	"errors"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
)

// spill stores a running command's settled head (capture.Settled) in a
// pending copy as it arrives, whole chunks at a time, so that when the
// command ends only the rest is left to save: the save overlaps the
// command instead of following it. It wakes when a whole chunk has
// settled (capture.Watch), not on a timer: a command that writes its
// output fast (cat of a large file) used to end before the first tick, 20
// ms in, and its whole copy was saved after it. Nobody sees the pending copy until
// retain finishes it; if the command's output fits the preview, retain
// aborts it; if spilling fails, what was spilled is aborted and the copy is
// saved whole, as without spilling. Each step also searches what has
// settled for error-like lines (errs), so that the footer's search after
// the command ends reads only the rest of the copy.
type spill struct {
	ctx     context.Context
	cp      *capture.Capture
	st      store.Streamer
	session string
	settled <-chan struct{} // cp.Watch: a whole chunk more has settled
	stop    chan struct{}
	done    chan struct{}

	// Owned by the loop until done is closed.
	pending store.PendingCopy // nil until the first whole chunk
	written int               // bytes of the copy appended to pending
	err     error
	errs    *present.ErrorScanner // searched as far as the last step's settled prefix
}

// startSpill starts spilling cp into a pending copy of this session, or
// returns nil when the store cannot save in pieces; errorsFrom is where
// the preview's search for error-like lines starts (preview.HeadFrom).
func (s *Session) startSpill(ctx context.Context, cp *capture.Capture, errorsFrom int64) *spill {
	st, ok := s.e.store.(store.Streamer)
	if !ok {
		return nil
	}
	sp := &spill{ctx: context.WithoutCancel(ctx), cp: cp, st: st, session: s.ID(),
		settled: cp.Watch(store.ChunkSize), stop: make(chan struct{}), done: make(chan struct{}),
		errs: present.NewErrorScanner(errorsFrom)}
	go sp.loop()
	return sp
}

func (sp *spill) loop() {
	defer close(sp.done)
	for sp.err == nil {
		select {
		case <-sp.stop:
			return
		case <-sp.settled:
			sp.step()
		}
	}
}

// step appends the whole chunks settled since the last step.
func (sp *spill) step() {
	settled := sp.cp.Settled()
	n := len(settled) / store.ChunkSize * store.ChunkSize
	if n <= sp.written {
		return
	}
	if sp.pending == nil {
		p, err := sp.st.BeginCopy(sp.ctx, sp.session)
		if err != nil {
			sp.err = err
			return
		}
		sp.pending = p
	}
	if err := sp.pending.Append(sp.ctx, settled[sp.written:n]); err != nil {
		sp.err = err
		return
	}
	sp.written = n
	sp.errs.Step(settled)
}

// scanner returns the search for error-like lines the steps made, once
// end has returned; nil when there was no spill.
func (sp *spill) scanner() *present.ErrorScanner {
	if sp == nil {
		return nil
	}
	return sp.errs
}

// end stops spilling and returns the pending copy and how many leading
// bytes of the copy it holds: nil, 0 when nothing was spilled, or when
// spilling failed (what it stored is then deleted, and err says why).
func (sp *spill) end() (_ store.PendingCopy, written int, err error) {
	if sp == nil {
		return nil, 0, nil
	}
	close(sp.stop)
	<-sp.done
	if sp.err != nil {
		if sp.pending != nil {
			abort(sp.ctx, sp.pending, sp.err)
		}
		return nil, 0, sp.err
	}
	return sp.pending, sp.written, nil
}

// abort deletes a pending copy whose save failed with err. When err says
// the database is locked, deleting it would wait for the lock as long
// again while the caller waits for its result: it is deleted in the
// background instead (or, should the process end first, by a later
// process, as a killed process's pending copy is).
func abort(ctx context.Context, p store.PendingCopy, err error) {
	if errors.Is(err, store.ErrBusy) {
		go p.Abort(ctx)
		return
	}
	p.Abort(ctx)
}
