package itenv_test

import (
	"runtime"
	"testing"

	"github.com/hostforge/hostforge/internal/itenv"
)

// outcome runs Var on a recording TB: what it returned, or how it ended
// the test and with what message.
func outcome(name, missing string) (value, ended, msg string) {
	rec := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		value = itenv.Var(rec, name, missing)
	}()
	<-done
	return value, rec.ended, rec.msg
}

type recorder struct {
	testing.TB
	ended, msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) { r.end("fatal", args) }

func (r *recorder) Skip(args ...any) { r.end("skip", args) }

func (r *recorder) end(how string, args []any) {
	r.ended, r.msg = how, args[0].(string)
	runtime.Goexit()
}

func TestVar(t *testing.T) {
	const name = "HOSTFORGE_ITENV_TEST_VAR"
	t.Setenv(name, "127.0.0.1:1")
	if v, ended, _ := outcome(name, "x.sh did not start it"); v != "127.0.0.1:1" || ended != "" {
		t.Fatalf("set: %q, ended %q", v, ended)
	}
	t.Setenv(name, "")
	t.Setenv(itenv.Require, "")
	if _, ended, msg := outcome(name, "x.sh did not start it"); ended != "skip" || msg != name+" is unset; run scripts/integration" {
		t.Fatalf("unset: %s %q", ended, msg)
	}
	t.Setenv(itenv.Require, "1")
	if _, ended, msg := outcome(name, "x.sh did not start it"); ended != "fatal" || msg != name+" is unset: x.sh did not start it" {
		t.Fatalf("unset, required: %s %q", ended, msg)
	}
	if _, ended, msg := outcome(name, ""); ended != "fatal" || msg != name+" is unset" {
		t.Fatalf("unset, required, nothing said: %s %q", ended, msg)
	}
}
