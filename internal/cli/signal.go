package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext returns a copy of parent that is cancelled when the process
// receives one of sigs, as signal.NotifyContext does, but with the signal
// as the cancellation's cause (context.Cause), so that `scrollback run`
// can say it was interrupted and exit as a shell would (128 + the signal's
// number). Call stop once the context is no longer needed: it restores the
// signals' default behaviour.
func SignalContext(parent context.Context, sigs ...os.Signal) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			cancel(signalCause{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// signalCause is the cause of a SignalContext cancelled by a signal.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return "scrollback was sent " + signalName(s.sig) }

// Signal is the signal: the runner passes it on to the command's process
// group (runner.Run), as a terminal passes Ctrl-C to its foreground group.
func (s signalCause) Signal() os.Signal { return s.sig }

// interruptedBy returns the signal that cancelled ctx, if a SignalContext
// was cancelled by one.
func interruptedBy(ctx context.Context) (os.Signal, bool) {
	s, ok := context.Cause(ctx).(signalCause)
	return s.sig, ok
}

// signalName names a signal as kill -l does, with SIG: "SIGINT".
func signalName(s os.Signal) string {
	if n, ok := s.(syscall.Signal); ok {
		switch n {
		case syscall.SIGINT:
			return "SIGINT"
		case syscall.SIGTERM:
			return "SIGTERM"
		case syscall.SIGHUP:
			return "SIGHUP"
		case syscall.SIGQUIT:
			return "SIGQUIT"
		}
	}
	return s.String()
}

// osSignalNumber is the number of s, as a shell adds it to 128 for the
// exit status; 0 when s has none.
func osSignalNumber(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 0
}
