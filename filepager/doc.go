// Package filepager pages through files on disk for the read_file tool.
//
// A Pager returns one Page of a file at a time: at most Options.PageBytes
// bytes of text (24 KiB by default) and at most Request.Limit lines (2000 by
// default), starting at a 1-based line or at an absolute byte offset.
//
// # Finding a line
//
// Line N is located in the whole file, however large, never in a prefix. The
// file is streamed in 1 MiB reads and newlines are counted with bytes.Count,
// which runs at memory speed, so reaching line 10,000,000 costs about what
// `wc -l` costs on the same file. Memory use does not depend on the file's
// size.
//
// While it scans, the Pager records a line index: for every 64 KiB boundary
// of the file, the line number that the byte there belongs to. The next
// request starts from the nearest checkpoint before its target and, where
// the index already covers the file, reads one 64 KiB chunk rather than a
// 1 MiB block, so the page after a far line costs one small read. An index
// (128 KiB for a 1 GiB file) is keyed by the file's resolved absolute path
// and is valid only for the size, modification and change times and inode
// it was built for: a file that changes is indexed afresh, even one
// rewritten to the same size with its modification time put back (cp -p,
// rsync -t, touch -d), since its change time moves whatever is done.
// Indexes live in a small in-memory LRU and, when Options.IndexDir is set,
// in one small file per indexed file in that directory (named by a hash of
// the path), so that another process continues from the recorded
// checkpoints. Index files are written atomically (a temporary file renamed
// into place); a missing, stale or corrupt index file is ignored and
// rewritten, never reported as an error.
//
// # Pages
//
// A page prefers whole lines: when the budget runs out it ends after the last
// newline that fits. A line longer than the whole page is shown a window at a
// time, Options.LineWindow bytes (4 KiB by default), cut at a UTF-8 boundary
// and continued by passing NextByteOffset as Request.ByteOffset; NextLine then
// stays on that line. Such a line is a minified document or a log blob far
// more often than prose, and a reader wants the part at an offset it searched
// for: a 24 KiB page of it costs a model some 6,000 tokens. Text holds the bytes as they are in the
// file, newlines included, except that a byte that is not part of a valid
// UTF-8 sequence counts as a one-byte character and shows as U+FFFD (offsets
// always count raw bytes). The budget applies to Text as returned, so a page
// of invalid bytes covers fewer raw bytes.
//
// Lines are numbered so that byte offset o is on line 1 + (newlines before
// o). StartLine is the line of the page's first byte, EndLine the line of its
// last byte, NextLine the line of NextByteOffset, and HasMore reports
// NextByteOffset < TotalBytes. An empty page (an empty file, or ByteOffset
// equal to the file's size) has empty Text, StartLine = EndLine = NextLine =
// the line of that offset (1 for an empty file), and HasMore false.
//
// A line past the end of the file is an error that says how many lines the
// file has; line 1 of an empty file is an empty page. A file ending in a
// newline has no line after it: asking for that line is past the end.
// A ByteOffset inside a multi-byte character is an error naming the nearest
// valid offsets before and after it; a negative one or one past the end is an
// error giving the file's size.
//
// # Refusals
//
// Every error a Read returns is an *Error carrying one of the sentinel errors
// below and a hint. Refused are: a missing file (ErrNotFound), a directory
// (ErrIsDir), anything other than a regular file (ErrNotRegular), a path
// outside Options.Root after resolving symlinks (ErrOutsideRoot, the same
// whether or not the path exists there), a symlink loop (ErrLoop), a binary
// file — a NUL byte in its first 8 KiB (ErrBinary) — and sensitive files
// (ErrSensitive). Sensitive rules are checked on the path as given and again
// after resolving symlinks, so a link to a secret is refused like the secret:
//
//   - anything under a .ssh directory except *.pub, known_hosts,
//     known_hosts.old, authorized_keys and config, which hold no secrets;
//   - SSH private keys anywhere: a base name starting with id_rsa, id_dsa,
//     id_ecdsa or id_ed25519, or any id_* name without a dot, except *.pub;
//   - *.key files, and *.pem files or extension-less files whose first 8 KiB
//     hold a PEM or OpenSSH private key block;
//   - credential files anywhere: .aws/credentials, .netrc, _netrc,
//     .git-credentials, .pgpass, .docker/config.json, anything under .gnupg;
//   - /etc/shadow, /etc/gshadow (and their "-" backups), /proc/*/environ;
//   - on macOS, keychains (anything under a Library/Keychains directory,
//     the user's and the system's) and /etc/master.passwd;
//   - on Windows, the credential stores under %APPDATA% and %LOCALAPPDATA%
//     (Microsoft\Credentials, Microsoft\Protect, Microsoft\Crypto,
//     Microsoft\Vault), GnuPG's %APPDATA%\gnupg, and the SAM, SECURITY and
//     SYSTEM registry hives under System32\config; %USERPROFILE%\.ssh and
//     the other rules above apply there too;
//   - .env and .env.* files anywhere, except the templates .env.example,
//     .env.sample, .env.template and .env.dist; .envrc is allowed (a direnv
//     script, normally committed, that reads secrets rather than holding them);
//   - Options.Deny patterns (filepath.Match on the absolute path, resolved or
//     as given, or on the base name; a leading "~/" means Options.Home).
//
// The rules compare names without case on every system (~/.SSH/ID_RSA is
// refused like ~/.ssh/id_rsa): macOS and Windows ignore case by default,
// and Linux does on case-insensitive mounts such as WSL's /mnt/c.
//
// A relative Request.Path is taken relative to Options.Root when it is set,
// else to the working directory; a leading "~/" means Options.Home.
//
// A page is cut from the size the file had when it was opened; a file that
// turns out shorter while it is read is ErrSize, never a page that looks
// whole. A file whose size the system reports as 0 although it has content
// (most of /proc) is read whole, up to 1 MiB (beyond that, ErrSize), and
// paged from what was read.
package filepager
