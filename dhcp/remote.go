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

// Remote is what the phase needs from the DHCP server: hash a file, upload a
// file, run a command. Implementations: the SSH adapter (adapters/ssh) and
// the in-memory fake (fakes.DHCPServer); dhcptest.Run is their contract.
//
// Errors: a *RemoteError of the matching Kind, or an error wrapping
// ErrHostKey, hostforge.ErrUnauthorized or hostforge.ErrUnavailable, or the
// context's error when ctx ended. A command that ran and exited non-zero is
// not an error.
type Remote interface {
	// Hash returns the lower-case hex SHA-256 of the file at path by running
	// one remote command. It returns "" and a nil error when the file is
	// absent or the command exited non-zero: the caller then uploads.
	Hash(ctx context.Context, path string) (string, error)
	// Upload writes data to path atomically, with mode 0644: into a
	// temporary file in path's directory, then renamed over path, so a
	// reader sees the old content or the new, never part of it, and two
	// uploads never share a temporary file. It does not create directories.
	Upload(ctx context.Context, path string, data []byte) error
	// Run runs a one-line POSIX shell command.
	Run(ctx context.Context, command string) (Output, error)
	// Close ends the session and drops key material.
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
)

var kindNames = [...]string{"other", "auth", "host-key", "connect", "timeout", "transport", "transfer"}

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
	// Op is what was being done: "dial", "hash", "upload", "run".
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

// Unwrap returns the cause.
func (e *RemoteError) Unwrap() error { return e.Err }

// Is lets errors.Is match a RemoteError against the sentinel of its kind.
func (e *RemoteError) Is(target error) bool {
	switch e.Kind {
	case KindHostKey:
		return target == ErrHostKey
	case KindAuth:
		return target == hostforge.ErrUnauthorized
	case KindConnect:
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
