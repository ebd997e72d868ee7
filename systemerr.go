package hostforge

import (
	"context"
	"errors"
)

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

// SystemSpecs maps the system errors above to one consuming phase's
// failure codes. A nil entry leaves that kind unclassified.
type SystemSpecs struct {
	NotFound, Unauthorized, Unavailable, Conflict, Invalid *Spec
}

// Classify turns an error a system client returned into the phase's
// Failure. nil, Failures, Waits and context errors pass through unchanged;
// an error of no mapped kind is returned as it is, for the runtime to
// report as UNCLASSIFIED — it is a bug in the client.
func (m SystemSpecs) Classify(err error, phase, format string, args ...any) error {
	if Settled(err) {
		return err
	}
	var spec *Spec
	switch {
	case errors.Is(err, ErrNotFound):
		spec = m.NotFound
	case errors.Is(err, ErrUnauthorized):
		spec = m.Unauthorized
	case errors.Is(err, ErrUnavailable):
		spec = m.Unavailable
	case errors.Is(err, ErrConflict):
		spec = m.Conflict
	case errors.Is(err, ErrInvalid):
		spec = m.Invalid
	}
	if spec == nil {
		return err
	}
	return spec.At(phase).Wrap(err, format, args...)
}

// Settled reports whether err needs no classification by a consuming
// phase: nil, a Failure, a Wait, or a context error (the runtime reports
// the last as CANCELLED).
func Settled(err error) bool {
	if err == nil {
		return true
	}
	if _, ok := AsFailure(err); ok {
		return true
	}
	if _, ok := AsWait(err); ok {
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
