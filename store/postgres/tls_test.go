package postgres

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeTLSServer listens like a PostgreSQL server that answers a client's
// SSLRequest with reply ('N': no TLS here; 'S': TLS, then a handshake
// with cfg, whose certificate no client trusts). Needs no server.
func fakeTLSServer(t *testing.T, reply byte, cfg *tls.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var req [8]byte
				if _, err := io.ReadFull(c, req[:]); err != nil {
					return
				}
				c.Write([]byte{reply})
				if reply == 'S' {
					tc := tls.Server(c, cfg)
					tc.Handshake()
					tc.Close()
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A TLS failure is the URL's sslmode or the server's certificate, not a
// server that is down: the error says so, not "check that PostgreSQL is
// running".
func TestOpenTLSRefused(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	defer ts.Close()
	for _, tc := range []struct {
		name  string
		reply byte
		mode  string
		want  []string
	}{
		{"server without TLS", 'N', "require", []string{"TLS", "sslmode"}},
		{"untrusted certificate", 'S', "verify-full", []string{"TLS", "sslmode", "sslrootcert"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeTLSServer(t, tc.reply, ts.TLS)
			_, err := Open(t.Context(), "postgres://scrollback@"+addr+"/scrollback?sslmode="+tc.mode+"&connect_timeout=5")
			var e *Error
			if !errors.As(err, &e) || e.Op != "connect" {
				t.Fatalf("Open: err = %v, want an *Error for connect", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(e.Hint, want) {
					t.Errorf("hint %q does not mention %q (error %q)", e.Hint, want, err)
				}
			}
			if strings.Contains(err.Error(), "is running") {
				t.Errorf("error %q says to check the server is running; it is", err)
			}
		})
	}
}
