package dhcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hostforge/hostforge"
)

// Dialer opens a Remote on the DHCP server. The phase dials once per
// Configure call and closes the Remote when the call ends, so credentials
// are held only for that long.
type Dialer interface {
	Dial(ctx context.Context) (Remote, error)
}

// Remote is what the phase needs from the DHCP server: hash, read, upload
// and remove files, take the server's configuration lock, run a command.
// Implementations: the SSH adapter (adapters/ssh) and the in-memory fake
// (fakes.DHCPServer); dhcptest.Run is their contract.
//
// Errors: a *RemoteError of the matching Kind, or an error wrapping
// ErrHostKey, hostforge.ErrUnauthorized or hostforge.ErrUnavailable, or the
// context's error when ctx ended. A command that ran and exited non-zero is
// not an error. Every method is bounded by one of the Remote's own deadlines
// as well as by ctx, so none of them can block for longer than that deadline.
type Remote interface {
	// Hash returns the lower-case hex SHA-256 of each file in paths, in
	// order, by running one remote command. A file that is absent or
	// unreadable, or every file when the command's output cannot be read,
	// has the hash "" and no error: the caller then uploads.
	Hash(ctx context.Context, paths ...string) ([]string, error)
	// Read returns the content of the file at path, and false with a nil
	// error when it does not exist.
	Read(ctx context.Context, path string) ([]byte, bool, error)
	// Upload writes data to path atomically and durably, with mode 0644:
	// into a temporary file in path's directory, flushed to stable storage
	// (fsync), then renamed over path, so a reader sees the old content or
	// the new, never part of it, a crash never leaves a truncated file, and
	// two uploads never share a temporary file. It does not create
	// directories.
	Upload(ctx context.Context, path string, data []byte) error
	// Remove removes the file at path; a file that does not exist is not an
	// error.
	Remove(ctx context.Context, path string) error
	// Lock takes the exclusive advisory lock (flock(2)) on path on the
	// server, waiting while another holder has it, and returns the function
	// that releases it. A wait that ctx or a deadline ends may leave the
	// session closed, when that is the only way to abandon it. path is a directory or a file (created when absent;
	// its directory must exist). Every session that locks the same path —
	// from this process, another process or another machine — takes turns.
	// The lock is also released when the session ends, so a worker that
	// dies never leaves the server locked.
	Lock(ctx context.Context, path string) (unlock func() error, err error)
	// Run runs a one-line POSIX shell command. A command that ctx or a
	// deadline ends is killed where the server allows it; otherwise the
	// session is closed, and every later call fails at once.
	Run(ctx context.Context, command string) (Output, error)
	// Close ends the session (releasing its locks) and drops key material.
	Close() error
}

// Output is a command's exit status and combined stdout and stderr.
type Output struct {
	Exit   int
	Output []byte
}

// Kind sorts remote failures by what the operator does about them.
type Kind int

// Kinds of remote failure.
const (
	// KindOther is an error no rule classifies.
	KindOther Kind = iota
	// KindAuth: the server refused our credentials.
	KindAuth
	// KindHostKey: the server's host key is not the one in known_hosts, or
	// known_hosts has no entry for it.
	KindHostKey
	// KindConnect: the server could not be reached.
	KindConnect
	// KindTimeout: one of the Remote's own deadlines expired.
	KindTimeout
	// KindTransport: the session broke while running a command.
	KindTransport
	// KindTransfer: a file transfer failed.
	KindTransfer
	// KindLock: the server-wide lock could not be taken (no flock on the
	// server, or the lock path cannot be opened).
	KindLock
)

var kindNames = [...]string{"other", "auth", "host-key", "connect", "timeout", "transport", "transfer", "lock"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// ErrHostKey is the cause of a host-key failure: the server presented a key
// that known_hosts does not list for it.
var ErrHostKey = errors.New("host key not trusted")

// Deadline names of the SSH adapter; RemoteError.Deadline carries one.
const (
	DeadlineConnect  = "connect"
	DeadlineLogin    = "login"
	DeadlineCommand  = "command"
	DeadlineTransfer = "transfer"
)

// RemoteError is a classified failure of a Remote.
type RemoteError struct {
	Kind Kind
	// Op is what was being done: "dial", "hash", "read", "upload",
	// "remove", "lock", "unlock", "run".
	Op string
	// Target is the file or command concerned (never a secret).
	Target string
	// Deadline names the deadline that expired (KindTimeout): "connect",
	// "login", "command" or "transfer". Limit is its length.
	Deadline string
	Limit    time.Duration
	Err      error
}

func (e *RemoteError) Error() string {
	msg := e.Op
	if e.Target != "" {
		msg += " " + e.Target
	}
	if e.Kind == KindTimeout && e.Deadline != "" {
		msg += fmt.Sprintf(": the %s deadline (%s) expired", e.Deadline, e.Limit)
	} else {
		msg += ": " + e.Kind.String() + " failure"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause. A timeout's cause never matches
// context.DeadlineExceeded (net and SSH timeouts do): the Remote's own
// deadline expired, not the caller's context, and code that reads a context
// error as a cancellation must not mistake one for the other.
func (e *RemoteError) Unwrap() error {
	if e.Kind == KindTimeout && e.Err != nil && (errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled)) {
		return errors.New(e.Err.Error())
	}
	return e.Err
}

// Is lets errors.Is match a RemoteError against the sentinel of its kind:
// ErrHostKey, hostforge.ErrUnauthorized, or hostforge.ErrUnavailable for a
// server that could not be reached or did not answer within a deadline.
func (e *RemoteError) Is(target error) bool {
	switch e.Kind {
	case KindHostKey:
		return target == ErrHostKey
	case KindAuth:
		return target == hostforge.ErrUnauthorized
	case KindConnect, KindTimeout:
		return target == hostforge.ErrUnavailable
	}
	return false
}

// KindOf classifies an error from a Remote: a *RemoteError's own kind, else
// by the sentinel it wraps (ErrHostKey, hostforge.ErrUnauthorized,
// hostforge.ErrUnavailable, context.DeadlineExceeded), else KindOther.
func KindOf(err error) Kind {
	var re *RemoteError
	if errors.As(err, &re) {
		return re.Kind
	}
	switch {
	case errors.Is(err, ErrHostKey):
		return KindHostKey
	case errors.Is(err, hostforge.ErrUnauthorized):
		return KindAuth
	case errors.Is(err, hostforge.ErrUnavailable):
		return KindConnect
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	}
	return KindOther
}
