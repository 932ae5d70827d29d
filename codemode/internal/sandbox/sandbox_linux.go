package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// statm is /proc/self/statm, opened by Prepare: once the sandbox holds,
// no file can be opened, and LimitRun reads the data segment from it.
var statm *os.File

// Prepare closes the descriptors the worker inherited by mistake and opens
// what it needs after Apply. Call it at the start, from the goroutine that
// will run the script, locked to its thread.
func Prepare() {
	closeInherited("/proc/self/fd")
	statm, _ = os.Open("/proc/self/statm")
}

// nobody is the user and group a worker started as root becomes.
const nobody = 65534

// Apply drops what the worker does not need, in order: descriptors and
// dumps, root, no_new_privs, Landlock, seccomp. Call it from the thread
// that will run the script (runtime.LockOSThread): where a layer can only
// hold for one thread, it is that one.
func Apply() []Layer {
	var layers []Layer
	layers = append(layers, rlimits("/proc/self/fd", "RLIMIT_DATA and RLIMIT_CPU"))
	if l, ok := dropRoot(); ok {
		layers = append(layers, l)
	}
	layers = append(layers, noNewPrivs())
	layers = append(layers, restrictLandlock())
	layers = append(layers, loadSeccomp())
	return layers
}

// dropRoot makes a worker started as root the user nobody, on every
// thread (Go's setuid family applies to all threads, with cgo or
// without). ok is false when the worker was not root.
func dropRoot() (Layer, bool) {
	if os.Geteuid() != 0 {
		return Layer{}, false
	}
	l := Layer{Name: "user"}
	if err := syscall.Setgroups(nil); err != nil {
		l.Detail = "setgroups: " + err.Error()
		return l, true
	}
	if err := syscall.Setresgid(nobody, nobody, nobody); err != nil {
		l.Detail = "setresgid: " + err.Error()
		return l, true
	}
	if err := syscall.Setresuid(nobody, nobody, nobody); err != nil {
		l.Detail = "setresuid: " + err.Error()
		return l, true
	}
	l.Active, l.Detail = true, fmt.Sprintf("started as root, runs as uid and gid %d (nobody), no capabilities", nobody)
	return l, true
}

// noNewPrivs sets no_new_privs on every thread where the runtime can
// (a binary without cgo), else on this one: the seccomp filter, loaded
// with TSYNC, then sets it on every thread.
func noNewPrivs() Layer {
	l := Layer{Name: "no_new_privs"}
	var err error
	if _, _, errno := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); errno == syscall.ENOTSUP {
		err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	} else if errno != 0 {
		err = errno
	}
	if err != nil {
		l.Detail = "prctl: " + err.Error()
		return l
	}
	l.Active, l.Detail = true, "set"
	return l
}

// restrictLandlock refuses every file access right, TCP bind and
// connect, and (ABI 6) abstract UNIX sockets and signals outside the
// worker, as far as the kernel's Landlock ABI goes. On every thread when
// the library can (ABI 8, or a binary without cgo), else on this one.
func restrictLandlock() Layer {
	l := Layer{Name: "landlock"}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		l.Detail = "unavailable: the kernel has no Landlock (or it is not enabled at boot)"
		return l
	}
	cfg := landlock.V11.BestEffort()
	where := "every thread"
	if err := cfg.Restrict(); err != nil {
		// Without TSYNC (ABI < 8) the library needs the runtime's
		// AllThreadsSyscall, which a cgo binary lacks: restrict the
		// script's own thread.
		fd, flags, ferr := cfg.NewRulesetFD()
		if ferr != nil {
			l.Detail = fmt.Sprintf("ABI %d, not applied: %v", abi, err)
			return l
		}
		rerr := ll.LandlockRestrictSelf(fd, flags)
		unix.Close(fd)
		if rerr != nil {
			l.Detail = fmt.Sprintf("ABI %d, not applied: %v; on this thread: %v", abi, err, rerr)
			return l
		}
		where = "the script's thread (this binary uses cgo and the kernel's ABI has no thread sync)"
	}
	refused := []string{}
	if probeFile() {
		refused = append(refused, "files")
	}
	if abi >= 4 && probeConnect() {
		refused = append(refused, "TCP connect")
	}
	if len(refused) == 0 {
		l.Detail = fmt.Sprintf("ABI %d applied, but /etc/passwd still opens", abi)
		return l
	}
	l.Active = true
	l.Detail = fmt.Sprintf("ABI %d on %s: %s refused", abi, where, strings.Join(refused, " and "))
	if abi < 4 {
		l.Detail += " (network rules need ABI 4)"
	}
	return l
}

// probeFile reports whether opening /etc/passwd is refused.
func probeFile() bool {
	fd, err := unix.Open("/etc/passwd", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return false
	}
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// probeConnect reports whether a TCP connect to loopback is refused by
// policy (not by nothing listening).
func probeConnect() bool {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
	}
	defer unix.Close(fd)
	err = unix.Connect(fd, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}})
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// denied are the system calls the seccomp filter refuses with EPERM:
// whatever reaches files by path, the network, other processes, and the
// kernel's administration. Names the architecture lacks are skipped.
var denied = []string{
	// files, by path
	"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
	"stat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "chdir", "chroot", "pivot_root", "statfs",
	"link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "rename", "renameat", "renameat2",
	"mkdir", "mkdirat", "rmdir", "mknod", "mknodat", "chmod", "fchmodat", "fchmodat2",
	"chown", "lchown", "fchownat", "truncate", "utime", "utimes", "utimensat", "futimesat",
	"setxattr", "lsetxattr", "getxattr", "lgetxattr", "listxattr", "llistxattr", "removexattr", "lremovexattr",
	"inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
	"memfd_create", "memfd_secret", "uselib", "mount", "umount2", "mount_setattr", "move_mount",
	"open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "swapon", "swapoff", "quotactl", "quotactl_fd", "acct",
	// network
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	// other processes
	"execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
	"process_madvise", "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "kcmp", "setns", "unshare", "tkill",
	// the kernel's administration
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "syslog",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
	"iopl", "ioperm", "io_uring_setup", "io_uring_enter", "io_uring_register", "lookup_dcookie",
	"personality", "modify_ldt", "vhangup", "nfsservctl",
}

// loadSeccomp loads the filter on every thread (TSYNC; it sets
// no_new_privs on each too): the calls in denied fail with EPERM, kill and
// tgkill aimed at another process too, clone without CLONE_THREAD (a new
// process, not a thread) too, and clone3 fails with ENOSYS so that a C
// library falls back to clone, where the flags can be read.
func loadSeccomp() Layer {
	l := Layer{Name: "seccomp"}
	if !seccomp.Supported() {
		l.Detail = "unavailable: the kernel has no seccomp filters"
		return l
	}
	info, err := arch.GetInfo("")
	if err != nil {
		l.Detail = "unavailable: " + err.Error()
		return l
	}
	var names []string
	for _, n := range denied {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	pid := uint64(os.Getpid())
	eperm := seccomp.Action(uint32(seccomp.ActionErrno) | uint32(unix.EPERM))
	enosys := seccomp.Action(uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS))
	other := seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: pid}}
	groups := []seccomp.SyscallGroup{
		{Names: names, Action: eperm},
		{NamesWithCondtions: []seccomp.NameWithConditions{
			{Name: "kill", Conditions: other},
			{Name: "tgkill", Conditions: other},
			{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsNotSet, Value: unix.CLONE_THREAD}}},
		}, Action: eperm},
	}
	if _, ok := info.SyscallNames["clone3"]; ok {
		groups = append(groups, seccomp.SyscallGroup{Names: []string{"clone3"}, Action: enosys})
	}
	filter := seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy:     seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups},
	}
	if err := seccomp.LoadFilter(filter); err != nil {
		l.Detail = "not loaded: " + err.Error()
		return l
	}
	if !probeFile() || !probeSocket() {
		l.Detail = "loaded, but a file or a socket still opens"
		return l
	}
	l.Active = true
	l.Detail = fmt.Sprintf("%d system calls refused on every thread (files, network, processes, kernel administration)", len(names)+4)
	return l
}

// probeSocket reports whether making a socket is refused.
func probeSocket() bool {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return false
	}
	return errors.Is(err, unix.EPERM)
}

// Data returns the worker's data segment in bytes (VmData, what
// RLIMIT_DATA counts), read from /proc/self/statm, which Prepare opened.
func Data() (int64, error) {
	_, data, err := statmBytes()
	return data, err
}

// statmBytes reads /proc/self/statm: the resident memory and the data
// segment (VmData: private writable memory, what RLIMIT_DATA counts).
func statmBytes() (resident, data int64, err error) {
	if statm == nil {
		return 0, 0, errors.New("/proc/self/statm is not open")
	}
	var buf [256]byte
	n, err := statm.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(buf[:n]))
	if len(f) < 6 {
		return 0, 0, fmt.Errorf("/proc/self/statm: %q", buf[:n])
	}
	res, err1 := strconv.ParseInt(f[1], 10, 64)
	pages, err2 := strconv.ParseInt(f[5], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("/proc/self/statm: %q", buf[:n])
	}
	page := int64(os.Getpagesize())
	return res * page, pages * page, nil
}

// LimitRun sets the limits of one run. Memory (bound > 0): the worker's
// data segment may grow from now by HardGrowth(bound) (RLIMIT_DATA: an
// allocation past it fails, and the Go runtime ends the worker with "out
// of memory"), and the Go runtime's soft limit is set just under bound
// above what it holds now (SoftLimit), so that the collector returns
// garbage before the server's watch or the hard limit stops the worker. CPU: the
// process's CPU time may not pass cpu more than it used so far
// (RLIMIT_CPU, whole seconds). It returns what it set, for the record.
func LimitRun(bound int64, inUse uint64, cpu time.Duration) string {
	var set []string
	if bound > 0 {
		if _, data, err := statmBytes(); err == nil && !raceDetector {
			lim := uint64(data + HardGrowth(bound))
			if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: lim, Max: lim}); err == nil {
				set = append(set, fmt.Sprintf("RLIMIT_DATA %d MiB (%d MiB now)", mib(int64(lim)), mib(data)))
			}
		}
		debug.SetMemoryLimit(SoftLimit(bound, inUse))
	}
	if cpu > 0 {
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		cpu = min(cpu, math.MaxInt64-used) // a timeout near the largest accepted must not wrap around
		secs := uint64((used+cpu)/time.Second) + 1
		if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: secs, Max: secs + 1}); err == nil {
			set = append(set, fmt.Sprintf("RLIMIT_CPU %d s", secs))
		}
	}
	return strings.Join(set, ", ")
}
