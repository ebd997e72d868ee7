package hostforge

import (
	"errors"
	"fmt"
	"testing"
)

// asType finds what errors.As finds, in every shape of chain.
func TestAsTypeAgreesWithErrorsAs(t *testing.T) {
	f := Unclassified.New("boom")
	w := RetryAfter(5, "busy", "the BMC is busy")
	s := NewSecrets("s3cret")
	leaky := Unclassified.New("refused s3cret")
	chains := map[string]error{
		"nil":           nil,
		"plain":         errors.New("x"),
		"failure":       f,
		"wait":          w,
		"wrapped":       fmt.Errorf("a: %w", fmt.Errorf("b: %w", f)),
		"joined":        errors.Join(errors.New("x"), fmt.Errorf("y: %w", w), f),
		"multi %w":      fmt.Errorf("%w and %w", errors.New("x"), f),
		"scrubbed":      s.Err(leaky),
		"scrubbed wait": s.Err(RetryAfter(5, "busy", "echo s3cret")),
		"wrapped scrub": fmt.Errorf("outer: %w", s.Err(leaky)),
	}
	for name, err := range chains {
		var wantF *Failure
		okF := errors.As(err, &wantF)
		gotF, gotOKF := AsFailure(err)
		if okF != gotOKF || (okF && gotF.Error() != wantF.Error()) {
			t.Errorf("%s: AsFailure = %v %v, errors.As = %v %v", name, gotF, gotOKF, wantF, okF)
		}
		var wantW *Wait
		okW := errors.As(err, &wantW)
		gotW, gotOKW := AsWait(err)
		if okW != gotOKW || (okW && gotW.Detail != wantW.Detail) {
			t.Errorf("%s: AsWait = %v %v, errors.As = %v %v", name, gotW, gotOKW, wantW, okW)
		}
	}
	if f, _ := AsFailure(s.Err(leaky)); f == nil || s.Contains(f.Error()) {
		t.Fatalf("the scrubbed error's Failure carries the secret: %v", f)
	}
}
