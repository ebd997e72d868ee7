package netboxhttp

import (
	"fmt"
	"strconv"
	"strings"
)

// A small GraphQL reader for the emulator's /graphql/ endpoint: one query
// operation (anonymous or named) of fields with literal arguments, aliases
// and inline fragments, as GraphQL's grammar writes them. Variables,
// directives, fragment definitions, mutations and subscriptions are
// refused with a syntax error naming them: the emulator does not model
// them (NetBox, being read-only over GraphQL, has no mutation either).

// gqlPos is a place in the query, 1-based, for error locations.
type gqlPos struct{ line, col int }

// gqlSel is one selection: a field, or an inline fragment (on != "").
type gqlSel struct {
	pos   gqlPos
	alias string // the response key: the alias, else the name
	name  string
	args  map[string]any
	on    string // inline fragment: its type condition
	sel   []gqlSel
}

// gqlSyntaxError is a malformed query, as graphql-core words it.
type gqlSyntaxError struct {
	pos gqlPos
	msg string
}

func (e *gqlSyntaxError) Error() string { return "Syntax Error: " + e.msg }

type gqlToken struct {
	kind string // "name", "int", "float", "string", "punct", "eof"
	text string
	pos  gqlPos
}

type gqlLexer struct {
	src       string
	i         int
	line, col int
}

func (l *gqlLexer) next() (gqlToken, error) {
	// Whitespace, commas (insignificant in GraphQL) and comments.
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '\n':
			l.i, l.line, l.col = l.i+1, l.line+1, 1
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == ',':
			l.i, l.col = l.i+1, l.col+1
			continue
		case c == '#':
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
			continue
		}
		break
	}
	pos := gqlPos{l.line, l.col}
	if l.i >= len(l.src) {
		return gqlToken{kind: "eof", pos: pos}, nil
	}
	start := l.i
	c := l.src[l.i]
	advance := func(n int) { l.i, l.col = l.i+n, l.col+n }
	switch {
	case strings.HasPrefix(l.src[l.i:], "..."):
		advance(3)
		return gqlToken{kind: "punct", text: "...", pos: pos}, nil
	case strings.ContainsRune("{}():!$=@[]|&", rune(c)):
		advance(1)
		return gqlToken{kind: "punct", text: string(c), pos: pos}, nil
	case c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		for l.i < len(l.src) && (l.src[l.i] == '_' || l.src[l.i] >= 'A' && l.src[l.i] <= 'Z' || l.src[l.i] >= 'a' && l.src[l.i] <= 'z' || l.src[l.i] >= '0' && l.src[l.i] <= '9') {
			advance(1)
		}
		return gqlToken{kind: "name", text: l.src[start:l.i], pos: pos}, nil
	case c == '-' || c >= '0' && c <= '9':
		advance(1)
		kind := "int"
		for l.i < len(l.src) && (l.src[l.i] >= '0' && l.src[l.i] <= '9' || strings.ContainsRune(".eE+-", rune(l.src[l.i]))) {
			if !(l.src[l.i] >= '0' && l.src[l.i] <= '9') {
				kind = "float"
			}
			advance(1)
		}
		return gqlToken{kind: kind, text: l.src[start:l.i], pos: pos}, nil
	case c == '"':
		if strings.HasPrefix(l.src[l.i:], `"""`) {
			return gqlToken{}, &gqlSyntaxError{pos, "block strings are not supported by the emulator."}
		}
		advance(1)
		var b strings.Builder
		for {
			if l.i >= len(l.src) || l.src[l.i] == '\n' {
				return gqlToken{}, &gqlSyntaxError{pos, "Unterminated string."}
			}
			ch := l.src[l.i]
			if ch == '"' {
				advance(1)
				return gqlToken{kind: "string", text: b.String(), pos: pos}, nil
			}
			if ch == '\\' && l.i+1 < len(l.src) {
				esc := map[byte]string{'"': `"`, '\\': `\`, '/': "/", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t"}[l.src[l.i+1]]
				if esc == "" {
					return gqlToken{}, &gqlSyntaxError{gqlPos{l.line, l.col}, fmt.Sprintf("Invalid character escape sequence: '\\%c'.", l.src[l.i+1])}
				}
				b.WriteString(esc)
				advance(2)
				continue
			}
			b.WriteByte(ch)
			advance(1)
		}
	}
	return gqlToken{}, &gqlSyntaxError{pos, fmt.Sprintf("Unexpected character: %q.", c)}
}

type gqlParser struct {
	lx  gqlLexer
	tok gqlToken
	err error
}

func (p *gqlParser) advance() {
	if p.err != nil {
		return
	}
	p.tok, p.err = p.lx.next()
}

func (p *gqlParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = &gqlSyntaxError{p.tok.pos, fmt.Sprintf(format, args...)}
	}
}

func (p *gqlParser) describe() string {
	switch p.tok.kind {
	case "eof":
		return "<EOF>"
	case "punct":
		return fmt.Sprintf("%q", p.tok.text)
	}
	return fmt.Sprintf("%s %q", map[string]string{"name": "Name", "int": "Int", "float": "Float", "string": "String"}[p.tok.kind], p.tok.text)
}

func (p *gqlParser) expect(punct string) {
	if p.err != nil {
		return
	}
	if p.tok.kind != "punct" || p.tok.text != punct {
		p.fail("Expected %q, found %s.", punct, p.describe())
		return
	}
	p.advance()
}

// parseQuery reads a document of one query operation and returns its
// top-level selection set.
func parseQuery(src string) ([]gqlSel, error) {
	p := &gqlParser{lx: gqlLexer{src: src, line: 1, col: 1}}
	p.advance()
	if p.err == nil && p.tok.kind == "name" {
		switch p.tok.text {
		case "query":
			p.advance()
			if p.tok.kind == "name" {
				p.advance() // the operation's name
			}
			if p.tok.kind == "punct" && (p.tok.text == "(" || p.tok.text == "@") {
				p.fail("variables and directives are not supported by the emulator.")
			}
		case "mutation", "subscription", "fragment":
			p.fail("%s operations are not supported: NetBox's GraphQL API serves queries only.", p.tok.text)
		default:
			p.fail("Unexpected %s.", p.describe())
		}
	}
	sel := p.selectionSet()
	if p.err == nil && p.tok.kind != "eof" {
		p.fail("Unexpected %s: the emulator takes one operation per document.", p.describe())
	}
	if p.err != nil {
		return nil, p.err
	}
	return sel, nil
}

func (p *gqlParser) selectionSet() []gqlSel {
	p.expect("{")
	var out []gqlSel
	for p.err == nil && !(p.tok.kind == "punct" && p.tok.text == "}") {
		if p.tok.kind == "eof" {
			p.fail("Expected Name, found <EOF>.")
			break
		}
		out = append(out, p.selection())
	}
	p.expect("}")
	if p.err == nil && len(out) == 0 {
		p.err = &gqlSyntaxError{p.tok.pos, "Expected Name, found \"}\"."}
	}
	return out
}

func (p *gqlParser) selection() gqlSel {
	pos := p.tok.pos
	if p.tok.kind == "punct" && p.tok.text == "..." {
		p.advance()
		if p.tok.kind != "name" || p.tok.text != "on" {
			p.fail("named fragments are not supported by the emulator.")
			return gqlSel{}
		}
		p.advance()
		if p.tok.kind != "name" {
			p.fail("Expected Name, found %s.", p.describe())
			return gqlSel{}
		}
		s := gqlSel{pos: pos, on: p.tok.text}
		p.advance()
		s.sel = p.selectionSet()
		return s
	}
	if p.tok.kind != "name" {
		p.fail("Expected Name, found %s.", p.describe())
		return gqlSel{}
	}
	s := gqlSel{pos: pos, name: p.tok.text}
	p.advance()
	if p.tok.kind == "punct" && p.tok.text == ":" {
		p.advance()
		if p.tok.kind != "name" {
			p.fail("Expected Name, found %s.", p.describe())
			return s
		}
		s.alias = s.name
		s.name = p.tok.text
		p.advance()
	}
	if s.alias == "" {
		s.alias = s.name
	}
	if p.tok.kind == "punct" && p.tok.text == "(" {
		p.advance()
		s.args = map[string]any{}
		for p.err == nil && !(p.tok.kind == "punct" && p.tok.text == ")") {
			if p.tok.kind != "name" {
				p.fail("Expected Name, found %s.", p.describe())
				break
			}
			name := p.tok.text
			p.advance()
			p.expect(":")
			s.args[name] = p.value()
		}
		p.expect(")")
	}
	if p.tok.kind == "punct" && p.tok.text == "@" {
		p.fail("directives are not supported by the emulator.")
	}
	if p.tok.kind == "punct" && p.tok.text == "{" {
		s.sel = p.selectionSet()
	}
	return s
}

// gqlEnum is an enum literal (a bare name that is not true, false or null).
type gqlEnum string

func (p *gqlParser) value() any {
	t := p.tok
	switch {
	case t.kind == "int":
		p.advance()
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			p.fail("Invalid number %q.", t.text)
		}
		return n
	case t.kind == "float":
		p.advance()
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			p.fail("Invalid number %q.", t.text)
		}
		return f
	case t.kind == "string":
		p.advance()
		return t.text
	case t.kind == "name":
		p.advance()
		switch t.text {
		case "true":
			return true
		case "false":
			return false
		case "null":
			return nil
		}
		return gqlEnum(t.text)
	case t.kind == "punct" && t.text == "[":
		p.advance()
		var out []any
		for p.err == nil && !(p.tok.kind == "punct" && p.tok.text == "]") {
			if p.tok.kind == "eof" {
				p.fail("Expected \"]\", found <EOF>.")
				break
			}
			out = append(out, p.value())
		}
		p.expect("]")
		return out
	case t.kind == "punct" && t.text == "{":
		p.advance()
		out := map[string]any{}
		for p.err == nil && !(p.tok.kind == "punct" && p.tok.text == "}") {
			if p.tok.kind != "name" {
				p.fail("Expected Name, found %s.", p.describe())
				break
			}
			name := p.tok.text
			p.advance()
			p.expect(":")
			out[name] = p.value()
		}
		p.expect("}")
		return out
	case t.kind == "punct" && t.text == "$":
		p.fail("variables are not supported by the emulator.")
		return nil
	}
	p.fail("Unexpected %s.", p.describe())
	return nil
}
