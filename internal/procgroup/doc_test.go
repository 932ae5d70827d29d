package procgroup

import "testing"

func TestForShell(t *testing.T) {
	doc := "Run a shell command with /bin/sh -c and get its output."
	if got := forShell("/bin/sh", doc); got != doc {
		t.Errorf("forShell(/bin/sh) = %q, want it unchanged", got)
	}
	want := "Run a shell command with cmd.exe /C (Windows) and get its output."
	if got := forShell("cmd.exe", doc); got != want {
		t.Errorf("forShell(cmd.exe) = %q, want %q", got, want)
	}
}
