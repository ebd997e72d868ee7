package nunjucks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// refusal is a template of the corpus's refusal set and what must stop it.
type refusal struct {
	name, payload, src, by string
}

func loadRefusals(t testing.TB) []refusal {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpus, "refusals", "*.njk"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no refusal templates under %s: %v", corpus, err)
	}
	sort.Strings(files)
	var out []refusal
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".njk")
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		by, err := os.ReadFile(strings.TrimSuffix(f, ".njk") + ".refused")
		if err != nil {
			t.Fatalf("%s: no .refused file: %v", name, err)
		}
		payload, _, _ := strings.Cut(name, "--")
		out = append(out, refusal{name: name, payload: payload, src: string(src), by: strings.TrimSpace(string(by))})
	}
	return out
}

// TestRefusalSet renders every template of the refusal set with the
// default budget and a deadline: each must end with an *Error that names
// its position and has the expected cause — ErrBudget before the template
// has built more than the budget, or the context's deadline.
func TestRefusalSet(t *testing.T) {
	for _, c := range loadRefusals(t) {
		t.Run(c.name, func(t *testing.T) {
			tpl, err := Parse(c.src)
			if err != nil {
				t.Fatalf("the template must parse (it is refused while rendering): %v", err)
			}
			// A short deadline for what only the deadline stops, a long one
			// for what the budget must stop on its own.
			deadline := 300 * time.Millisecond
			if c.by == "budget" {
				deadline = time.Minute
			}
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			out, err := tpl.Render(ctx, loadPayload(t, c.payload), Options{})
			if err == nil {
				t.Fatalf("rendered %d bytes; want a refusal by its %s", len(out), c.by)
			}
			var te *Error
			if !errors.As(err, &te) || te.Line == 0 {
				t.Fatalf("error %T %v: want an *Error with the template position", err, err)
			}
			switch c.by {
			case "budget":
				if !errors.Is(err, ErrBudget) {
					t.Fatalf("error %v: want the budget's", err)
				}
			case "deadline":
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("error %v: want the deadline's", err)
				}
			default:
				t.Fatalf("%s.refused says %q: want budget or deadline", c.name, c.by)
			}
		})
	}
}

func TestRenderStopsWhenItsContextEnds(t *testing.T) {
	tpl, err := Parse("{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}\n  {{ f(60) }}")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = tpl.Render(ctx, nil, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v, want context.Canceled", err)
	}

	cause := errors.New("the operator interrupted")
	ctx, cancelCause := context.WithCancelCause(t.Context())
	time.AfterFunc(20*time.Millisecond, func() { cancelCause(cause) })
	_, err = tpl.Render(ctx, nil, Options{})
	var te *Error
	if !errors.Is(err, cause) || !errors.As(err, &te) {
		t.Fatalf("cancelled while rendering: %v, want an *Error caused by %v", err, cause)
	}
	if te.Line == 0 || !strings.Contains(te.Msg, "stopped") {
		t.Fatalf("error %v: want the position of the call it stopped in", err)
	}

	// Loops and filters check too: a loop that runs long on its own.
	loop, err := Parse(`{% for i in range(1000000) %}{{ i | string | length }}{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	if _, err := loop.Render(ctx, nil, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("loop: %v, want context.Canceled", err)
	}
}

func TestBudgetIsTheOptions(t *testing.T) {
	tpl, err := Parse(`{{ "x".repeat(4096) | length }}`)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tpl.Render(t.Context(), nil, Options{}); err != nil || out != "4096" {
		t.Fatalf("default budget: %q, %v", out, err)
	}
	_, err = tpl.Render(t.Context(), nil, Options{Budget: 4000})
	var te *Error
	if !errors.Is(err, ErrBudget) || !errors.As(err, &te) || te.Line != 1 || te.Col != 4 {
		t.Fatalf("a 4000-byte budget: %v, want ErrBudget at line 1, column 4", err)
	}
	if !strings.Contains(err.Error(), "4000 bytes") {
		t.Fatalf("error %q does not name the budget", err)
	}
	// What a template only reads (the payload) is not charged.
	data := `{"big": "` + strings.Repeat("y", 8000) + `"}`
	if out, err := render(t, `{{ big | length }}`, data, Options{Budget: 4000}); err != nil || out != "8000" {
		t.Fatalf("reading a payload value: %q, %v", out, err)
	}
}

// TestCyclicArraysPrintAsV8 holds a cyclic array to V8's join: the array
// met again inside itself prints as empty (it used to recurse until the
// process died of a stack overflow).
func TestCyclicArraysPrintAsV8(t *testing.T) {
	got, err := render(t, `{% set a = [1] %}{% set _ = a.push(a) %}[{{ a }}][{{ a | join("-") }}][{{ a.join("+") }}]`, "", Options{})
	if err != nil || got != "[1,][1-][1+]" {
		t.Fatalf("got %q, %v; want [1,][1-][1+] as Nunjucks prints it", got, err)
	}
}
