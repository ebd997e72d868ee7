package hostforge

import "errors"

// Errors a system client (a fake or an adapter) returns for what the remote
// system said, wrapped with detail (fmt.Errorf("...: %w", hostforge.ErrNotFound)).
// The consuming phase turns them into Failures with its own code, phase and
// operator action; a client may instead return a *Failure when it knows more.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: the credentials were refused (401/403).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrUnavailable: the system is down, overloaded or timed out; a retry may succeed.
	ErrUnavailable = errors.New("unavailable")
	// ErrConflict: the write conflicts with the system's current state.
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the system refused the request as malformed.
	ErrInvalid = errors.New("invalid request")
)
