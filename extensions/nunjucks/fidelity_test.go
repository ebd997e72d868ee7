package nunjucks

import (
	"strings"
	"testing"
)

// TestRegExpFeaturesGoCannotMatch: what Go's regular expressions cannot
// do is refused when the template is parsed, with the position — never
// matched differently from JavaScript.
func TestRegExpFeaturesGoCannotMatch(t *testing.T) {
	for src, want := range map[string]string{
		`{{ "aa" | replace(r/(a)\1/, "x") }}`:   "backreferences",
		`{{ "aa" | replace(r/a(?=a)/, "x") }}`:  "lookahead and lookbehind",
		`{{ "aa" | replace(r/(?<!b)a/, "x") }}`: "lookahead and lookbehind",
		`{{ "aa" | replace(r/a/y, "x") }}`:      "sticky flag y",
		`{{ "aa" | replace(r/a/gg, "x") }}`:     "Invalid flags",
		`{{ "aa" | replace(r/a{2000}/, "x") }}`: "Invalid regular expression",
		`{{ "aa" | replace(r/[\S]/, "x") }}`:    `\S inside a character class`,
		`{{ "aa" | replace(r/\ud800/, "x") }}`:  "surrogates",
		`{{ "aa" | replace(r/[a/, "x") }}`:      "unterminated character class",
		`{{ "aa" | replace(r/\07/, "x") }}`:     "octal",
	} {
		_, err := Parse(src)
		te, ok := err.(*Error)
		if !ok || te.Line != 1 || te.Col != 19 || !strings.Contains(te.Msg, want) {
			t.Errorf("Parse(%s) = %v; want an error at 1:19 mentioning %q", src, err, want)
		}
	}
}

// TestRegExpTranslation holds the JavaScript meaning of what Go's syntax
// reads differently: \s, ".", [^], [], an escaped letter, \cX, \xHH.
func TestRegExpTranslation(t *testing.T) {
	const data = `{"s": "a\u00a0b\u2028c\rd\u000be"}`
	cases := map[string]string{
		`{{ s | replace(r/\s/g, "_") }}`:                   "a_b_c_d_e",
		`{{ s | replace(r/./g, ".") }}`:                    "...\u2028.\r...", // . stops at line terminators
		`{{ "a\nb" | replace(r/[^]/g, "x") }}`:             "xxx",
		`{{ "ab" | replace(r/[]/g, "x") }}`:                "ab",
		`{{ "aqb" | replace(r/\q/, "Q") }}`:                "aQb",
		`{{ "a[:alpha:]" | replace(r/[[:alpha:]]/, "") }}`: "a[:alpha", // [ inside a class is a character
		`{{ "x-y" | replace(r/[a\-z]/g, "_") }}`:           "x_y",
		`{{ "AB" | replace(r/\x41/, "a") }}`:               "aB",
		`{{ "a.b" | replace(r/\./, "!") }}`:                "a!b",
	}
	for src, want := range cases {
		got, err := render(t, src, data, Options{})
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", src, got, err, want)
		}
	}
}

// TestLoneSurrogates: a payload's lone surrogate stays one (JSON.parse
// keeps it), dump writes it escaped, and the rendered text carries U+FFFD
// in its place, as a file Node writes does.
func TestLoneSurrogates(t *testing.T) {
	const data = `{"lone": "a\ud800b", "emoji": "\ud83d\ude00"}`
	cases := map[string]string{
		`{{ lone | dump }}`: `"a\ud800b"`,
		`{{ lone }}`:        "a\uFFFDb",
		`{{ emoji.charAt(0) }}{{ emoji.charAt(1) }}`:             "😀", // two halves printed next to each other
		`{{ emoji.charAt(0) ~ "x" }}`:                            "\uFFFDx",
		`{{ emoji.charAt(0) | shellquote }}`:                     "'\uFFFD'",
		`{{ (emoji.charAt(0) ~ emoji.charAt(1)) == emoji }}`:     "true",
		`{{ [emoji.charAt(1), emoji.charAt(0)] | join | dump }}`: `"\ude00\ud83d"`,
		`{{ lone | upper | dump }}`:                              `"A\ud800B"`,
	}
	for src, want := range cases {
		got, err := render(t, src, data, Options{})
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", src, got, err, want)
		}
	}
	if _, err := render(t, `{{ emoji.charAt(0) | urlencode }}`, data, Options{}); err == nil || !strings.Contains(err.Error(), "URIError") {
		t.Errorf("urlencode of a lone surrogate: %v, want JavaScript's URIError", err)
	}
	v, err := FromJSON([]byte(`{"x": "\udfff"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := v.(*Object).Get("x"); s != "\xed\xbf\xbf" {
		t.Errorf("FromJSON kept %q, want the lone surrogate in WTF-8", s)
	}
}
