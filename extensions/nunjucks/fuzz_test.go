package nunjucks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzTemplate feeds arbitrary templates to Parse and Render: a template
// is operator input, so whatever it is, the result is output or an *Error,
// never a panic or a hang (its deadline and budget end it). Seeded with the
// golden corpus.
func FuzzTemplate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus, "templates", "*.njk"))
	for _, fn := range files {
		if b, err := os.ReadFile(fn); err == nil {
			f.Add(string(b))
		}
	}
	data := loadPayload(f, "small")
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("Parse error %T %v, want *Error", err, err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		for _, strict := range []bool{false, true} {
			if _, err := tpl.Render(ctx, data, Options{Strict: strict}); err != nil {
				var te *Error
				if !errors.As(err, &te) {
					t.Fatalf("Render error %T %v, want *Error", err, err)
				}
			}
		}
	})
}

// FuzzFromJSON checks the payload parser against encoding/json: it accepts
// exactly the valid JSON texts (up to its nesting bound), and what it
// reads dumps back to JSON that encoding/json accepts.
func FuzzFromJSON(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus, "payloads", "*.json"))
	for _, fn := range files {
		if b, err := os.ReadFile(fn); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"a":"\ud83d\ude00\u00e9","b":[1e400,-0,0.1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := FromJSON(b)
		valid := json.Valid(b)
		deep := strings.Count(string(b), "[")+strings.Count(string(b), "{") > maxDepth
		if err == nil && !valid {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		if err != nil && valid && !deep {
			t.Fatalf("refused valid JSON %q: %v", b, err)
		}
		if err != nil {
			return
		}
		s, ok, derr := stringify(v, "")
		if derr != nil || !ok || !json.Valid([]byte(s)) {
			t.Fatalf("dump of %q gave %q (%v, %v)", b, s, ok, derr)
		}
	})
}
