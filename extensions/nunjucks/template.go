package nunjucks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// Error is a template that does not parse or does not render, with the
// 1-based position of the offending expression when known.
type Error struct {
	Line, Col int
	Msg       string
	// Cause is what ended the render when it was not the template's own
	// fault: ErrBudget, or the context's error or cause. It is also the
	// error of a function a template called.
	Cause error
}

// Error renders "line L, column C: message".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
	}
	return e.Msg
}

// Unwrap returns the cause: errors.Is(err, ErrBudget) tells a render that
// ran out of budget, errors.Is(err, context.DeadlineExceeded) one that ran
// out of time.
func (e *Error) Unwrap() error { return e.Cause }

// Template is a parsed template. It is immutable and safe for concurrent
// use.
type Template struct {
	body []stmt
}

// Options change how a template renders.
type Options struct {
	// Budget is the bytes of strings and arrays the render may build
	// (DefaultBudget when zero or negative); a render that needs more ends
	// with an *Error whose cause is ErrBudget.
	Budget int64

	// Strict refuses undefined values: printing one, reading a member of
	// one (or of null), concatenating or computing with one, or piping one
	// into a filter other than default. Tests (is defined), default(),
	// if/and/or/not still accept them. Nunjucks' own throwOnUndefined
	// only catches printing.
	Strict bool
}

// Parse parses a template. A template that does not parse, uses an unknown
// filter or test, or a tag an extension template cannot use (include,
// import, extends) is an *Error with the line and column.
func Parse(src string) (t *Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, &Error{Msg: fmt.Sprintf("the template cannot be parsed: %v", p)}
		}
	}()
	ps := prepare(src)
	prepared := ps.text
	cfg := config.New()
	cfg.KeepTrailingNewline = true
	stream := tokens.LexAll(prepared, cfg)
	var toks []*tokens.Token
	for !stream.End() {
		toks = append(toks, stream.Current())
		stream.Next()
	}
	if tk := stream.Current(); tk != nil && tk.Type == tokens.Error {
		line, col := position(prepared, tk.Pos-len(tk.Val)-1) // where the string or tag began
		return nil, &Error{Line: line, Col: col, Msg: "unterminated string or tag: " + quote(ellipsis(restoreCR(tk.Val)))}
	}
	p := parser.NewParser("template", tokens.LexAll(prepared, cfg), cfg, noLoader{}, controlStructures)
	root, err := p.Parse()
	if err != nil {
		return nil, syntaxError(err)
	}
	body, err := newCompiler(toks, ps).stmts(root.Nodes)
	if err != nil {
		return nil, err
	}
	return &Template{body: body}, nil
}

// syntaxError turns gonja's error into an *Error with its position.
func syntaxError(err error) error {
	var se *parser.SyntaxError
	if errors.As(err, &se) {
		msg := se.Message
		if se.Raw != "" {
			msg += " (near " + quote(ellipsis(restoreCR(se.Raw))) + ")"
		}
		return &Error{Line: se.Line, Col: se.Column, Msg: msg}
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	// gonja prefixes "Unable to parse controlStructure "x": "; keep the cause.
	return &Error{Msg: restoreCR(tagPrefix.ReplaceAllString(err.Error(), ""))}
}

var tagPrefix = regexp.MustCompile(`^(Unable to parse controlStructure "[^"]*": )+`)

// position converts a byte offset of the source into a 1-based line and
// column (in characters).
func position(src string, off int) (int, int) {
	off = min(max(off, 0), len(src))
	line := 1 + strings.Count(src[:off], "\n")
	start := strings.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCountInString(src[start:off])
}

// Render renders the template with data: the object's keys are the
// template's variables (FromJSON or FromGo builds it; nil renders with
// none). The render stops, with an *Error naming the template position,
// when ctx ends or the template builds more than opts.Budget bytes.
func (t *Template) Render(ctx context.Context, data *Object, opts Options) (out string, err error) {
	var b strings.Builder
	root := &frame{}
	r := &renderer{out: &b, frame: root, root: root, data: data, strict: opts.Strict,
		ctx: ctx, done: ctx.Done(), budget: opts.Budget}
	if r.budget <= 0 {
		r.budget = DefaultBudget
	}
	defer func() {
		if p := recover(); p != nil {
			a, ok := p.(abort)
			if !ok {
				panic(p)
			}
			out, err = "", wrapAt(a.err, r.at)
		}
	}()
	if err := r.interrupted(pos{}); err != nil {
		return "", err
	}
	if err := r.run(t.body); err != nil {
		return "", err
	}
	return toUTF8(b.String()), nil
}

// noLoader refuses every template reference: extension templates are
// self-contained strings.
type noLoader struct{}

func (noLoader) Read(path string) (io.Reader, error) {
	return nil, fmt.Errorf("templates cannot load %q", path)
}
func (noLoader) Resolve(path string) (string, error) {
	return "", fmt.Errorf("templates cannot load %q", path)
}
func (noLoader) Inherit(string) (loaders.Loader, error) {
	return nil, fmt.Errorf("templates cannot load other templates")
}
