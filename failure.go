package hostforge

import (
	"fmt"
	"strings"
)

// Owner is the team that acts on a failure.
type Owner string

// Owners of failures. They say who picks up the page, not who is to blame.
const (
	// OwnerInfraEng: the infrastructure engineers who run enrollment (routing,
	// NetBox data, site configuration).
	OwnerInfraEng Owner = "INFRA_ENG"
	// OwnerFleetManager: the team behind the fleet inventory service.
	OwnerFleetManager Owner = "FLEET_MANAGER"
	// OwnerDCOps: the on-site data-centre team (cabling, optics, hardware).
	OwnerDCOps Owner = "DC_OPS"
	// OwnerNetwork: the network team (switches, DHCP service hosts).
	OwnerNetwork Owner = "NETWORK"
	// OwnerSDK: hostforge itself; a failure owned by the SDK is a bug to report.
	OwnerSDK Owner = "SDK"
	// OwnerTenant: the team whose workload holds the host (the owner of the
	// instance Ironic has on the node); hostforge never tears a host down
	// under it, so only that team can release it.
	OwnerTenant Owner = "TENANT"
)

// Spec declares one failure code: everything about a failure that does not
// depend on the particular occurrence. Declare each Spec once, with [Declare].
type Spec struct {
	// Code is the stable, upper-case identifier, e.g. IRONIC_ROUTING_UNRESOLVED.
	Code string
	// Phase is the workflow phase that raises it, e.g. resolve_ironic_instance.
	Phase string
	// Owner is who acts on it.
	Owner Owner
	// Retryable says whether rerunning the same attempt, unchanged, can succeed.
	Retryable bool
	// Action is the operator's next step.
	Action string
}

// New returns a Failure of this code with a message naming what went wrong
// for this occurrence (the device, the field, the value seen).
func (s *Spec) New(format string, args ...any) *Failure {
	return &Failure{Spec: *s, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns a Failure of this code caused by err.
func (s *Spec) Wrap(err error, format string, args ...any) *Failure {
	return &Failure{Spec: *s, Message: fmt.Sprintf(format, args...), Cause: err}
}

// Is reports whether err is, or wraps, a Failure of this code.
func (s *Spec) Is(err error) bool { return CodeOf(err) == s.Code }

// Failure is a classified, operator-actionable failure.
type Failure struct {
	Spec
	// Message describes this occurrence. It never carries a secret: the
	// adapters scrub what a remote system says of every secret value in
	// flight before it becomes an error (see Secrets), the phases scrub the
	// credentials they handle, and the step runtimes scrub once more.
	Message string
	// Detail is what a remote system answered at length, kept for the
	// record of the occurrence: a response body, a command's output, with
	// the request that drew it. Error() leaves it out, so log lines and
	// error strings never carry a body; it is scrubbed like Message, and
	// serialised.
	Detail string `json:"detail,omitempty"`
	// Cause is the underlying error, if any. It is not serialised.
	Cause error `json:"-"`
}

// Error renders "CODE (phase, owner OWNER): message: cause".
func (f *Failure) Error() string {
	var b strings.Builder
	b.WriteString(f.Code)
	if f.Phase != "" {
		b.WriteString(" (")
		b.WriteString(f.Phase)
		b.WriteString(")")
	}
	if f.Message != "" {
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	if f.Cause != nil {
		b.WriteString(": ")
		b.WriteString(f.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Cause }

// Is matches another *Failure with the same code, so that
// errors.Is(err, spec.New("")) works as well as spec.Is(err).
func (f *Failure) Is(target error) bool {
	t, ok := target.(*Failure)
	return ok && t.Code == f.Code
}

// CodeOf returns the code of the first Failure in err's chain, or "" when err
// is nil or carries no Failure.
func CodeOf(err error) string {
	if f, ok := AsFailure(err); ok {
		return f.Code
	}
	return ""
}

// AsFailure returns the first Failure in err's chain.
func AsFailure(err error) (*Failure, bool) { return asType[*Failure](err) }

// asType is errors.As for a concrete error type, without the allocation
// errors.As makes for its target (the runtime classifies every step's
// error): it walks the chain the same way — the error itself, then its As
// method, then what it unwraps to, depth first through joined errors.
func asType[T error](err error) (T, bool) {
	var zero T
	for err != nil {
		if t, ok := err.(T); ok {
			return t, true
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var t T
			if x.As(&t) {
				return t, true
			}
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if t, ok := asType[T](e); ok {
					return t, true
				}
			}
			return zero, false
		default:
			return zero, false
		}
	}
	return zero, false
}

// At returns the spec raised in another phase: one code, declared once, can
// be raised by the several phases that meet it —
// PortConflict.At(phase).New("...") instead of setting Phase by hand.
func (s *Spec) At(phase string) *Spec {
	c := *s
	c.Phase = phase
	return &c
}
