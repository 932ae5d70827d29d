package filepager

import (
	"bytes"
	"path/filepath"
	"strings"
)

// sensitiveReason reports why the absolute, cleaned path p must not be read,
// or "" when no built-in rule refuses it. The rules are those listed in the
// package documentation; they look at path components rather than at the
// home directory alone, so that another user's ~/.ssh is refused too.
func sensitiveReason(p string) string {
	slashed := filepath.ToSlash(p)
	parts := strings.Split(strings.TrimPrefix(slashed, "/"), "/")
	base := parts[len(parts)-1]
	parent := ""
	if len(parts) >= 2 {
		parent = parts[len(parts)-2]
	}
	for i, c := range parts[:len(parts)-1] {
		switch c {
		case ".ssh":
			if i == len(parts)-2 && sshPublic(base) {
				continue
			}
			return "SSH keys and credentials (.ssh)"
		case ".gnupg":
			return "a GnuPG keyring (.gnupg)"
		}
	}
	if strings.HasPrefix(base, "id_") && !strings.HasSuffix(base, ".pub") {
		if !strings.Contains(base, ".") {
			return "an SSH private key (id_*)"
		}
		for _, k := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"} {
			if strings.HasPrefix(base, k) {
				return "an SSH private key (id_*)"
			}
		}
	}
	switch {
	case strings.HasSuffix(base, ".key"):
		return "a private key file (*.key)"
	case base == ".netrc" || base == "_netrc":
		return "a credential file (.netrc)"
	case base == ".git-credentials":
		return "a credential file (.git-credentials)"
	case base == ".pgpass":
		return "a credential file (.pgpass)"
	case parent == ".aws" && base == "credentials":
		return "a credential file (.aws/credentials)"
	case parent == ".docker" && base == "config.json":
		return "a credential file (.docker/config.json)"
	case isEnvFile(base):
		return "an environment file with secrets (.env)"
	}
	switch slashed {
	case "/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-":
		return "system password hashes (" + slashed + ")"
	}
	if len(parts) >= 3 && parts[0] == "proc" && base == "environ" {
		return "a process environment (/proc/*/environ)"
	}
	return ""
}

// sshPublic reports whether a file directly in a .ssh directory holds no
// secret.
func sshPublic(base string) bool {
	switch base {
	case "known_hosts", "known_hosts.old", "authorized_keys", "config":
		return true
	}
	return strings.HasSuffix(base, ".pub")
}

// isEnvFile reports whether base is a .env file: ".env" or ".env.*", except
// the committed templates.
func isEnvFile(base string) bool {
	if base == ".env" {
		return true
	}
	if !strings.HasPrefix(base, ".env.") {
		return false
	}
	switch strings.TrimPrefix(base, ".env.") {
	case "example", "sample", "template", "dist":
		return false
	}
	return true
}

// sniffPrivateKey reports whether the file at p, whose first bytes are head,
// holds a private key: a *.pem or extension-less file with a line starting a
// PEM or OpenSSH private key block. Other files (source code with a test key
// in a string, say) are not sniffed.
func sniffPrivateKey(p string, head []byte) bool {
	base := filepath.Base(p)
	ext := filepath.Ext(base)
	if ext != ".pem" && ext != "" && ext != base {
		return false
	}
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimRight(line, "\r")
		if bytes.HasPrefix(line, []byte("-----BEGIN ")) &&
			(bytes.HasSuffix(line, []byte("PRIVATE KEY-----")) || bytes.HasSuffix(line, []byte("PRIVATE KEY BLOCK-----"))) {
			return true
		}
	}
	return false
}

// denyMatch reports the first pattern that matches the absolute path p or
// its base name. A malformed pattern is reported as an error by the caller
// before any read, so here it simply does not match.
func denyMatch(patterns []string, p string) string {
	base := filepath.Base(p)
	for _, pat := range patterns {
		if ok, _ := filepath.Match(pat, p); ok {
			return pat
		}
		if ok, _ := filepath.Match(pat, base); ok {
			return pat
		}
	}
	return ""
}
