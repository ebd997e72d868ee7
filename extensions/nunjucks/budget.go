package nunjucks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultBudget is the bytes of strings and arrays one render may build
// when Options.Budget is zero.
const DefaultBudget = 64 << 20

// ErrBudget is the cause of an *Error that ended a render because it
// built more strings and arrays than its budget allows. A render stopped
// by its context has the context's error (or cause) as its cause instead.
var ErrBudget = errors.New("render budget exceeded")

// Why a budget: a template is operator input rendered inside the worker,
// and a few short expressions can ask for gigabytes ("a".repeat(1e6) |
// indent(1e7)), exponential work (a macro calling itself twice) or both.
// The output, iteration and macro-depth caps bound none of these, so every
// render also has a budget of bytes and a context:
//
//   - every string and array a render builds is charged its size before it
//     is built when the size can be known first (repeat, padding, indent,
//     center, replace, concat, range, +, ~), or while it is built for what
//     can only be measured by building it (join, dump, an array printed);
//     anything else is charged once built, and only when it is a new value.
//     Nothing is refunded, so the budget bounds what a render can hold at
//     any moment and, with it, the work it can do on data;
//   - loops check the context on every iteration, macro calls on every
//     call, filters and method calls before they run, so a render whose
//     context is cancelled or past its deadline stops within one step.
//
// Both end the render with an *Error that names the template position.

// charge counts n more bytes held by this render's strings and arrays.
func (r *renderer) charge(n int) error {
	if n <= 0 {
		return nil
	}
	r.held += int64(n)
	if r.held > r.budget {
		return r.budgetError()
	}
	return nil
}

// room is how many more bytes the render may build.
func (r *renderer) room() int {
	if r.held >= r.budget {
		return 0
	}
	return int(min(r.budget-r.held, int64(maxInt)))
}

const maxInt = int(^uint(0) >> 1)

func (r *renderer) budgetError() error {
	return &Error{Msg: fmt.Sprintf("the template built more than %d bytes of strings and arrays (its render budget)", r.budget), Cause: ErrBudget}
}

// chargeResult charges a value a filter or method returned, unless it is
// its input or one of its arguments (returned unchanged, already counted)
// or holds nothing.
func (r *renderer) chargeResult(v, in any, args []any) error {
	n := 0
	switch x := v.(type) {
	case string:
		if len(x) == 0 || same(x, in) {
			return nil
		}
		for _, a := range args {
			if same(x, a) {
				return nil
			}
		}
		n = len(x)
	case *Array:
		if x == in {
			return nil
		}
		for _, a := range args {
			if a == any(x) {
				return nil
			}
		}
		n = arrayBytes(len(x.Items))
	case *Object:
		if x == in {
			return nil
		}
		for _, a := range args {
			if a == any(x) {
				return nil
			}
		}
		n = objectBytes(x)
	case *safeString:
		if same(x.s, in) {
			return nil
		}
		n = len(x.s)
	default:
		return nil
	}
	return r.charge(n)
}

// same reports whether v is the string s (comparing equal strings of the
// same length costs nothing when they share their bytes).
func same(s string, v any) bool {
	t, ok := v.(string)
	return ok && len(t) == len(s) && t == s
}

// arrayBytes is what n array elements hold (an interface value each).
func arrayBytes(n int) int { return 16 * n }

// objectBytes is what an object's keys and values hold.
func objectBytes(o *Object) int {
	n := 0
	for _, k := range o.keys {
		n += len(k) + 48 // the key twice (slice and map), the value, map overhead
	}
	return n
}

// interrupted reports the render's context ending: cancelled, or past its
// deadline.
func (r *renderer) interrupted(p pos) error {
	select {
	case <-r.done:
	default:
		return nil
	}
	cause := context.Cause(r.ctx)
	return &Error{Line: p.line, Col: p.col, Msg: "the render was stopped: " + cause.Error(), Cause: cause}
}

// bounded is a strings.Builder that refuses to grow past max bytes: what a
// render builds whose size is known only once built (a join, a dump) is
// built within the render's remaining budget. With done set, it also stops
// (over and stopped) when done is closed, checked every MiB it grows.
type bounded struct {
	strings.Builder
	max           int
	over, stopped bool
	done          <-chan struct{}
	checked       int
}

// builder is a bounded builder for this render: its remaining budget, its
// context.
func (r *renderer) builder() bounded { return bounded{max: r.room(), done: r.done} }

// overflow is the error of a builder that stopped: the render's context
// ended, or its budget ran out.
func (r *renderer) overflow(b *bounded) error {
	if b.stopped {
		return r.interrupted(pos{})
	}
	return r.budgetError()
}

func (b *bounded) fits(n int) bool {
	if b.over || b.Len()+n > b.max {
		b.over = true
		return false
	}
	if b.done != nil && b.Len()-b.checked >= 1<<20 {
		b.checked = b.Len()
		select {
		case <-b.done:
			b.over, b.stopped = true, true
			return false
		default:
		}
	}
	return true
}

func (b *bounded) WriteString(s string) {
	if b.fits(len(s)) {
		b.Builder.WriteString(s)
	}
}

func (b *bounded) WriteByte(c byte) error {
	if b.fits(1) {
		return b.Builder.WriteByte(c)
	}
	return nil
}

func (b *bounded) WriteRune(c rune) {
	if b.fits(utf8.RuneLen(c)) {
		b.Builder.WriteRune(c)
	}
}

// abort ends a render from inside a conversion that has no error result
// (an array printed as text): Render recovers it and gives the error the
// position of the expression being evaluated.
type abort struct{ err *Error }

// join is Array.prototype.join within the render's remaining budget.
func (r *renderer) join(a *Array, sep string) (any, error) {
	b := r.builder()
	s := joinInto(&b, a, sep)
	if b.over {
		return nil, r.overflow(&b)
	}
	return s, nil
}
