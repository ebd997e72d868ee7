package nunjucks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func render(t *testing.T, src, data string, opts Options) (string, error) {
	t.Helper()
	tpl, err := Parse(src)
	if err != nil {
		return "", err
	}
	var obj *Object
	if data != "" {
		v, err := FromJSON([]byte(data))
		if err != nil {
			t.Fatalf("data: %v", err)
		}
		obj = v.(*Object)
	}
	return tpl.Render(t.Context(), obj, opts)
}

// TestCompatibilityRules names each difference between gonja (Jinja) and
// Nunjucks that the layer closes. Each rule has an inline case, and a
// golden template of the same name that real Nunjucks 3.2.4 renders to the
// recorded output (TestGoldenCorpus here, nunjucks-golden.js in make
// integration).
func TestCompatibilityRules(t *testing.T) {
	const data = `{"items":[{"name":"b"},{"name":"a"}],"nil":null,"t":true,"s":"a,b","q":"it's","lone":"\ud800"}`
	rules := []struct {
		rule, golden, src, want string
	}{
		{"undefined and null print as empty", "small--undefined-and-null-print-empty", "[{{ nosuch }}][{{ nil }}]", "[][]"},
		{"a member of undefined is undefined, not an error", "small--member-of-undefined-is-undefined", "[{{ nosuch.a.b }}][{{ nil.x }}]", "[][]"},
		{"booleans print true and false", "small--booleans-print-true-false", "{{ t }} {{ not t }}", "true false"},
		{"an array prints comma-joined", "small--array-prints-comma-joined", "{{ [1, [2, 3], null, 'x'] }}", "1,2,3,,x"},
		{"an integral number prints without .0", "small--integral-number-prints-without-fraction", "{{ 4000/1000 }} {{ 7/2 }}", "4 3.5"},
		{"dump is JSON.stringify: compact, in key order", "small--dump-is-json-stringify", `{{ {"b": 1, "a": [true, nil], "2": "x"} | dump }}`, `{"2":"x","b":1,"a":[true,null]}`},
		{"default replaces only undefined unless its third argument is true", "small--default-replaces-only-undefined", `[{{ nosuch | default("d") }}][{{ nil | default("d") }}][{{ nil | default("d", true) }}]`, "[d][][d]"},
		{"join takes a separator and an attribute", "small--join-with-separator-and-attribute", `{{ items | join(", ", "name") }}`, "b, a"},
		{"title first last length", "small--title-first-last-length", `{{ "ab cd" | title }} {{ items | first | dump }} {{ s | last }} {{ items | length }}`, `Ab Cd {"name":"b"} b 2`},
		{"replace upper lower", "small--replace-upper-lower", `{{ s | replace(",", ";") | upper }} {{ "AB" | lower }}`, "A;B ab"},
		{"tilde concatenates, with JavaScript's precedence", "small--tilde-concatenates", `{{ "a" ~ 1 + 2 }} {{ "x" ~ nosuch }}`, "a12 xundefined"},
		{"loop.index and loop.last", "small--loop-index-and-last", `{% for i in items %}{{ loop.index }}{{ i.name }}{% if not loop.last %},{% endif %}{% endfor %}`, "1b,2a"},
		{"string methods", "small--string-methods", `{{ s.split(",") | dump }} {{ s.toUpperCase() }} {{ " x ".trim() }} {{ s.length }}`, `["a","b"] A,B x 3`},
		{"shellquote quotes one shell word", "small--shellquote", `echo {{ q | shellquote }} {{ nosuch | shellquote }}`, `echo 'it'"'"'s' ''`},
		{"set in a loop updates the enclosing variable", "small--set-in-loop-updates-outer", `{% set n = 0 %}{% for i in items %}{% set n = n + 1 %}{% endfor %}{{ n }}`, "2"},
		{"empty arrays and objects are truthy", "small--truthiness", `{% if [] %}a{% endif %}{% if {} %}o{% endif %}`, "ao"},
		{"comparison is JavaScript's", "small--comparisons", `{{ 1 == "1" }} {{ 1 === "1" }} {{ nil == nosuch }}`, "true false true"},
		{"whitespace control trims like Nunjucks", "small--whitespace-control", "a  {%- if t -%}  b  {%- endif -%}  c", "abc"},
		{"a backslash escapes any character in a string literal", "text--string-literal-escapes", `{{ "C:\\temp\\" }}|{{ 'it\'s' }}|{{ q | replace("'", "\\'") }}|{{ "\x" }}`, `C:\temp\|it's|it\'s|x`},
		{"call passes its body to the macro as caller", "text--call-caller", `{% macro w(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call w("p") %}{{ s }}{% endcall %}`, "<p>a,b</p>"},
		{"switch runs the first strictly equal case; an empty case falls through", "text--switch-case-default", `{% switch 2 %}{% case "2" %}s{% case 2 %}{% case 3 %}n{% default %}d{% endswitch %}`, "n"},
		{"verbatim and raw print their text, nested blocks included", "text--verbatim-and-raw", `{% verbatim %}{{ s }}{% endverbatim %}{% raw %}{% raw %}{% endraw %}{% endraw %}`, `{{ s }}{% raw %}{% endraw %}`},
		{"escape marks its result safe, so a second escape leaves it", "text--escape-marks-safe", `{{ "<b>" | escape | escape }}`, "&lt;b&gt;"},
		{"regular-expression literals, with flags", "text--regex-literals", `{{ "a.b." | replace(r/\.$/g, "") }} {{ r/^A/i.test(s) }}`, "a.b true"},
		{"toPrecision", "text--to-precision", `{{ (123.456).toPrecision(4) }}`, "123.5"},
		{"dump writes a lone surrogate as JSON.stringify does", "text--dump-lone-surrogates", `{{ lone | dump }}`, `"\ud800"`},
	}
	for _, r := range rules {
		t.Run(r.rule, func(t *testing.T) {
			got, err := render(t, r.src, data, Options{})
			if err != nil || got != r.want {
				t.Fatalf("%s\n got %q, %v\nwant %q", r.src, got, err, r.want)
			}
			if _, err := os.Stat(filepath.Join(corpus, "templates", r.golden+".njk")); err != nil {
				t.Fatalf("the rule has no golden template checked against Nunjucks: %v", err)
			}
		})
	}
}

func TestStrictModeRefusesUndefined(t *testing.T) {
	const data = `{"server":{"model":"R450","rackName":null,"tags":[]}}`
	cases := []struct {
		name, src, want, errPart string
	}{
		{"printing an undefined name", "{{ nosuch }}", "", "nosuch is undefined"},
		{"printing an undefined member", "{{ server.modle }}", "", "server.modle is undefined"},
		{"reading a member of undefined", "{{ srv.model }}", "", "srv is undefined"},
		{"reading a member of null", "{{ server.rackName.row }}", "", "server.rackName is null"},
		{"concatenating undefined", `{{ "x" ~ server.modle }}`, "", "server.modle is undefined"},
		{"arithmetic on undefined", `{{ server.cores * 2 }}`, "", "server.cores is undefined"},
		{"a filter on undefined", `{{ server.modle | upper }}`, "", "server.modle is undefined"},
		{"printing null is allowed", `[{{ server.rackName }}]`, "[]", ""},
		{"default accepts undefined", `{{ server.modle | default("?") }}`, "?", ""},
		{"is defined accepts undefined", `{{ server.modle is defined }}`, "false", ""},
		{"if accepts undefined", `{% if server.modle %}x{% else %}none{% endif %}`, "none", ""},
		{"or accepts undefined", `{{ server.modle or server.model }}`, "R450", ""},
		{"defined values render", `{{ server.model }} {{ server.tags | length }}`, "R450 0", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loose, lerr := render(t, c.src, data, Options{})
			if lerr != nil {
				t.Fatalf("without strict mode the template must render: %v", lerr)
			}
			got, err := render(t, c.src, data, Options{Strict: true})
			if c.errPart == "" {
				if err != nil || got != c.want {
					t.Fatalf("strict: got %q, %v; want %q", got, err, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("strict mode rendered %q (lenient: %q); want an error naming %q", got, loose, c.errPart)
			}
			if !strings.Contains(err.Error(), c.errPart) || !strings.Contains(err.Error(), "line 1, column") {
				t.Fatalf("error %q does not name %q with its position", err, c.errPart)
			}
		})
	}
}

func TestParseErrorsCarryPositions(t *testing.T) {
	cases := []struct {
		name, src string
		line, col int
		msgPart   string
	}{
		{"unclosed if", "a\n{% if x %}\nb", 0, 0, "endif"},
		{"unknown filter", "line1\n  {{ x | nope }}", 2, 10, `unknown filter "nope"`},
		{"unknown test", "{{ x is nope }}", 1, 9, `unknown test "nope"`},
		{"include", `{% include "x" %}`, 0, 0, "not supported"},
		{"bad expression", "{{ 1 + }}", 1, 8, ""},
		{"slice syntax", "{{ s[1:2] }}", 1, 5, "slice"},
		{"exponent literal", "{{ 1e3 }}", 1, 4, "exponent"},
		{"unterminated string", `{{ "abc }}`, 1, 4, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.src)
			te, ok := err.(*Error)
			if !ok {
				t.Fatalf("Parse(%q) = %v, want *Error", c.src, err)
			}
			if c.line != 0 && (te.Line != c.line || te.Col != c.col) {
				t.Errorf("position %d:%d, want %d:%d (%v)", te.Line, te.Col, c.line, c.col, te)
			}
			if !strings.Contains(te.Error(), c.msgPart) {
				t.Errorf("error %q does not mention %q", te, c.msgPart)
			}
		})
	}
}

func TestLimitsStopRunawayTemplates(t *testing.T) {
	cases := map[string]string{
		"a huge range":        "{{ range(100000000) | length }}",
		"a huge repeat":       `{{ "x".repeat(100000000) }}`,
		"runaway recursion":   "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
		"too many iterations": "{% for i in range(2000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}",
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := render(t, src, "", Options{}); err == nil {
				t.Fatal("rendered without hitting a limit")
			}
		})
	}
}

func TestPayloadArraysAreReadOnly(t *testing.T) {
	const data = `{"names":["a","b"]}`
	if _, err := render(t, `{% set _ = names.push("c") %}`, data, Options{}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("push on a payload array: %v, want a read-only error", err)
	}
	got, err := render(t, `{% set c = names.slice() %}{% set _ = c.push("c") %}{{ c }}|{{ names }}`, data, Options{})
	if err != nil || got != "a,b,c|a,b" {
		t.Fatalf("copy then push: %q, %v", got, err)
	}
}

func TestConcurrentRendersShareOnePayload(t *testing.T) {
	tpl, err := Parse(`{% set l = [] %}{% for n in names %}{% set _ = l.push(n | upper) %}{% endfor %}{{ l | join }}{{ names | sort(true) | join }}`)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := FromJSON([]byte(`{"names":["a","b","c"]}`))
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				out, err := tpl.Render(context.Background(), v.(*Object), Options{})
				if err != nil || out != "ABCcba" {
					errs <- out
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("concurrent render gave %q", e)
	}
}

func TestFromJSONKeepsJavaScriptKeyOrder(t *testing.T) {
	v, err := FromJSON([]byte(`{"b":1,"a":2,"10":3,"2":4,"b":5,"02":6}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	if got := strings.Join(o.Keys(), ","); got != "2,10,b,a,02" {
		t.Fatalf("keys %s, want 2,10,b,a,02 (index keys first, a repeated key keeps its place)", got)
	}
	if b, _ := o.Get("b"); b != 5.0 {
		t.Fatalf("repeated key kept %v, want the last value 5", b)
	}
	for _, bad := range []string{`{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `"\x"`, `nul`, `{"a":1} x`, "\"a\tb\""} {
		if _, err := FromJSON([]byte(bad)); err == nil {
			t.Errorf("FromJSON(%q) accepted invalid JSON", bad)
		}
	}
}

func TestFormatNumberIsJavaScripts(t *testing.T) {
	cases := map[float64]string{
		4: "4", 3.5: "3.5", -0.5: "-0.5", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-7: "1e-7", 0.000001: "0.000001", 123456789.125: "123456789.125", 5e-324: "5e-324",
		1.7976931348623157e308: "1.7976931348623157e+308", 2.5e-10: "2.5e-10",
	}
	for f, want := range cases {
		if got := formatNumber(f); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", f, got, want)
		}
	}
	fixed := []struct {
		f    float64
		d    int
		want string
	}{{1.005, 2, "1.00"}, {1.5, 0, "2"}, {2.5, 0, "3"}, {-1.5, 0, "-2"}, {-0.0001, 2, "-0.00"}, {123.456, 1, "123.5"}, {0, 3, "0.000"}}
	for _, c := range fixed {
		if got := toFixed(c.f, c.d); got != c.want {
			t.Errorf("toFixed(%v, %d) = %q, want %q", c.f, c.d, got, c.want)
		}
	}
}
