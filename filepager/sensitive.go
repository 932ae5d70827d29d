package filepager

import (
	"bytes"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// sensitiveReason reports why the absolute, cleaned path p must not be read
// on this system, or "" when no built-in rule refuses it.
func sensitiveReason(p string) string { return sensitiveReasonOn(runtime.GOOS, p) }

// sensitiveReasonOn reports why the absolute, cleaned path p must not be
// read on the system goos (a runtime.GOOS value), or "" when no built-in
// rule refuses it. The rules are those listed in the package
// documentation; they look at path components rather than at the home
// directory alone, so that another user's ~/.ssh is refused too. Names are
// compared without case on every system, so ~/.SSH/ID_RSA is refused like
// ~/.ssh/id_rsa: macOS and Windows ignore case by default, and so does
// Linux on a case-insensitive mount (WSL's /mnt/c, vfat, casefold
// directories), where both names open the same file.
func sensitiveReasonOn(goos, p string) string {
	slashed := filepath.ToSlash(p)
	if goos == "windows" {
		// Taken apart here rather than by filepath, so that the rules
		// for Windows can be tested anywhere.
		slashed = strings.ReplaceAll(slashed, `\`, "/")
	}
	slashed = strings.ToLower(slashed)
	parts := strings.Split(strings.TrimPrefix(slashed, "/"), "/")
	if why := platformReason(goos, parts); why != "" {
		return why
	}
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

// windowsCredentialDirs are the directories under %APPDATA%\Microsoft and
// %LOCALAPPDATA%\Microsoft that hold credentials and the keys that protect
// them: Credential Manager, DPAPI master keys, CryptoAPI private keys and
// the Windows Vault.
var windowsCredentialDirs = []string{"credentials", "protect", "crypto", "vault"}

// appData spells the AppData directories as Windows shows them.
var appData = map[string]string{"roaming": "Roaming", "local": "Local"}

// platformReason applies the rules that belong to one system to the
// path's components, lower-cased.
func platformReason(goos string, parts []string) string {
	dirs := parts[:len(parts)-1]
	switch goos {
	case "darwin", "ios":
		for i := 0; i+1 < len(dirs); i++ {
			if dirs[i] == "library" && dirs[i+1] == "keychains" {
				return "a macOS keychain (Library/Keychains)"
			}
		}
		if strings.Join(parts, "/") == "etc/master.passwd" || strings.Join(parts, "/") == "private/etc/master.passwd" {
			return "system password hashes (/etc/master.passwd)"
		}
	case "windows":
		for i := 0; i+2 < len(dirs); i++ {
			if (dirs[i] == "roaming" || dirs[i] == "local") && dirs[i+1] == "microsoft" && slices.Contains(windowsCredentialDirs, dirs[i+2]) {
				return `a Windows credential store (AppData\` + appData[dirs[i]] + `\Microsoft\` + dirs[i+2] + `)`
			}
		}
		for i := 0; i+1 < len(dirs); i++ {
			if dirs[i] == "roaming" && dirs[i+1] == "gnupg" {
				return `a GnuPG keyring (AppData\Roaming\gnupg)`
			}
		}
		if n := len(parts); n >= 3 && parts[n-3] == "system32" && parts[n-2] == "config" &&
			(parts[n-1] == "sam" || parts[n-1] == "security" || parts[n-1] == "system") {
			return `a registry hive with password hashes (System32\config\` + strings.ToUpper(parts[n-1]) + `)`
		}
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
