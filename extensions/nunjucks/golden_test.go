package nunjucks

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The golden corpus: ../testdata/templates/PAYLOAD--case.njk rendered with
// ../testdata/payloads/PAYLOAD.json must give PAYLOAD--case.out, or fail
// when PAYLOAD--case.err exists. The recorded results come from real
// Nunjucks 3.2.4 (../testdata/nunjucks-golden.js --write), and `make
// integration` renders the corpus with Nunjucks again, so every case here
// is a place where this package and Nunjucks agree.

const corpus = "../testdata"

type goldenCase struct {
	name, payload, src string
	want               *string // nil: the template must fail
}

func loadCorpus(t testing.TB) []goldenCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpus, "templates", "*.njk"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden templates under %s: %v", corpus, err)
	}
	sort.Strings(files)
	var out []goldenCase
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".njk")
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		payload, _, ok := strings.Cut(name, "--")
		if !ok {
			t.Fatalf("%s: name must be PAYLOAD--case", f)
		}
		c := goldenCase{name: name, payload: payload, src: string(src)}
		if b, err := os.ReadFile(strings.TrimSuffix(f, ".njk") + ".out"); err == nil {
			s := string(b)
			c.want = &s
		} else if _, err := os.Stat(strings.TrimSuffix(f, ".njk") + ".err"); err != nil {
			t.Fatalf("%s: neither .out nor .err is recorded", name)
		}
		out = append(out, c)
	}
	return out
}

func loadPayload(t testing.TB, name string) *Object {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus, "payloads", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := FromJSON(b)
	if err != nil {
		t.Fatalf("payload %s: %v", name, err)
	}
	return v.(*Object)
}

func TestGoldenCorpus(t *testing.T) {
	for _, c := range loadCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			data := loadPayload(t, c.payload)
			tpl, err := Parse(c.src)
			var got string
			if err == nil {
				got, err = tpl.Render(t.Context(), data, Options{})
			}
			switch {
			case c.want == nil && err == nil:
				t.Fatalf("rendered %q; Nunjucks fails on this template", got)
			case c.want == nil:
				if _, ok := err.(*Error); !ok {
					t.Fatalf("error %T (%v), want *Error", err, err)
				}
			case err != nil:
				t.Fatalf("error: %v\nwant %q", err, *c.want)
			case got != *c.want:
				t.Fatalf("rendered differs from Nunjucks\n got %q\nwant %q", got, *c.want)
			}
		})
	}
}
