package store_test

import (
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for _, prefix := range []string{store.SessionPrefix, store.CopyPrefix, ""} {
		for range 1000 {
			id := store.NewID(prefix)
			if len(id) != len(prefix)+26 || !strings.HasPrefix(id, prefix) {
				t.Fatalf("NewID(%q) = %q: want the prefix and 26 characters", prefix, id)
			}
			if !store.ValidID(prefix, id) {
				t.Fatalf("ValidID(%q, NewID(%q) = %q) = false", prefix, prefix, id)
			}
			if seen[id] {
				t.Fatalf("NewID returned %q twice", id)
			}
			seen[id] = true
		}
	}
}

func TestValidID(t *testing.T) {
	good := "out_abcdefghijklmnopqrstuvwxyz"
	tests := []struct {
		prefix, id string
		want       bool
	}{
		{store.CopyPrefix, good, true},
		{store.CopyPrefix, "out_22222222222222222222222222", true},
		{store.CopyPrefix, "out_77777777777777777777777777", true},
		{store.SessionPrefix, good, false},                          // wrong prefix
		{store.CopyPrefix, good[:len(good)-1], false},               // too short
		{store.CopyPrefix, good + "a", false},                       // too long
		{store.CopyPrefix, "out_ABCDEFGHIJKLMNOPQRSTUVWXYZ", false}, // upper case
		{store.CopyPrefix, "out_0000000000000000000000000a", false}, // 0 and 1 are not base32
		{store.CopyPrefix, "out_18888888888888888888888888", false},
		{store.CopyPrefix, "out_../../../../../etc/passwd_", false},
		{store.CopyPrefix, "out_' OR 1=1 --aaaaaaaaaaaaaa", false},
		{store.CopyPrefix, "out_abcdefghijklmnopqrstuvwxy\x00", false},
		{store.CopyPrefix, "out_abcdefghijklmnopqrstuvwxyé"[:30], false}, // a byte of a multi-byte char
		{store.CopyPrefix, "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := store.ValidID(tt.prefix, tt.id); got != tt.want {
			t.Errorf("ValidID(%q, %q) = %v, want %v", tt.prefix, tt.id, got, tt.want)
		}
	}
}

// FuzzValidID: ValidID never panics, and accepts exactly the prefix plus 26
// characters of the lower-case base32 alphabet.
func FuzzValidID(f *testing.F) {
	f.Add("out_", "out_abcdefghijklmnopqrstuvwxyz")
	f.Add("s_", "s_")
	f.Add("", "../../etc/passwd")
	f.Fuzz(func(t *testing.T, prefix, id string) {
		got := store.ValidID(prefix, id)
		rest, ok := strings.CutPrefix(id, prefix)
		want := ok && len(rest) == 26 && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz234567") == ""
		if got != want {
			t.Fatalf("ValidID(%q, %q) = %v, want %v", prefix, id, got, want)
		}
	})
}
