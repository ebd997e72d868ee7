package nunjucks

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// Limits that keep a template from exhausting the process: a task
// template is operator input, rendered inside the worker.
const (
	maxOutput     = 16 << 20  // bytes of rendered text
	maxIterations = 1_000_000 // loop iterations per render
	maxMacroDepth = 64
)

type expr interface {
	eval(r *renderer) (any, error)
	where() pos
	text() string
}

type stmt interface {
	exec(r *renderer) error
}

type kwArg struct {
	name string
	e    expr
}

// frame is a Nunjucks frame: a scope of variables. A for loop pushes one;
// if does not; a macro call starts a fresh chain.
type frame struct {
	vars   map[string]any
	parent *frame
	// bound names the variables the frame's construct binds (a loop's
	// variables, a macro's parameters): what a caller body sees of the
	// place it was written, as Nunjucks compiles those to closures.
	bound []string
	// A caller's frame has no parent: closure holds the bound variables
	// of the {% call %} site, and dynamic is the frame caller() was called
	// from (inside the macro), which Nunjucks' runtime lookups reach.
	closure map[string]any
	dynamic *frame
}

// next is the frame lookups go on to after f.
func (f *frame) next() *frame {
	if f.closure != nil {
		return f.dynamic
	}
	return f.parent
}

func (f *frame) set(name string, v any) {
	if f.vars == nil {
		f.vars = make(map[string]any, 4)
	}
	f.vars[name] = v
}

// renderer is one rendering of a template.
type renderer struct {
	out    *strings.Builder
	frame  *frame
	root   *frame // the template's top-level frame (Nunjucks' context variables)
	data   *Object
	strict bool
	iters  int
	depth  int

	ctx    context.Context
	done   <-chan struct{} // ctx.Done(), read once
	held   int64           // bytes of strings and arrays built so far
	budget int64           // the most held may reach
	at     pos             // the expression being evaluated, for an aborted render
}

func (r *renderer) errf(p pos, format string, args ...any) error {
	return &Error{Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

// lookup resolves a name: the frame chain, the top-level variables, the
// data, then the globals (range, cycler, joiner).
func (r *renderer) lookup(name string) any {
	for f := r.frame; f != nil; f = f.next() {
		if v, ok := f.vars[name]; ok && !isUndef(v) {
			return v
		}
		if v, ok := f.closure[name]; ok && !isUndef(v) {
			return v
		}
	}
	if v, ok := r.root.vars[name]; ok && !isUndef(v) {
		return v
	}
	if r.data != nil {
		if v, ok := r.data.vals[name]; ok {
			return v
		}
	}
	if g, ok := globals[name]; ok {
		return g
	}
	return undef
}

// assign is Nunjucks' frame.set(name, v, true): it updates the innermost
// frame that already has the variable, else the current one. A top-level
// assignment is visible to macros too.
func (r *renderer) assign(name string, v any) {
	if r.frame.closure != nil {
		r.frame.set(name, v) // a caller's body keeps its own assignments
		return
	}
	for f := r.frame; f != nil; f = f.next() {
		if old, ok := f.vars[name]; ok && !isUndef(old) {
			f.vars[name] = v
			return
		}
	}
	r.frame.set(name, v)
}

// undefinedUse refuses an undefined value in strict mode.
func (r *renderer) undefinedUse(e expr, v any) error {
	if r.strict && isUndef(v) {
		return r.errf(e.where(), "%s is undefined (strict mode refuses undefined values)", e.text())
	}
	return nil
}

// write appends s to the output, charging it to the budget.
func (r *renderer) write(p pos, s string) error {
	if r.out.Len()+len(s) > maxOutput {
		return r.errf(p, "the rendered text exceeds %d bytes", maxOutput)
	}
	if err := r.charge(len(s)); err != nil {
		return wrapAt(err, p)
	}
	r.out.WriteString(s)
	return nil
}

func (r *renderer) run(ss []stmt) error {
	for _, s := range ss {
		if err := s.exec(r); err != nil {
			return err
		}
	}
	return nil
}

// capture renders ss into a string of its own.
func (r *renderer) capture(ss []stmt) (string, error) {
	saved := r.out
	var b strings.Builder
	r.out = &b
	err := r.run(ss)
	r.out = saved
	return b.String(), err
}

// ---- statements ----

type textStmt struct {
	s string
	p pos
}

func (t *textStmt) exec(r *renderer) error { return r.write(t.p, t.s) }

type outputStmt struct {
	e expr
	p pos
}

func (s *outputStmt) exec(r *renderer) error {
	v, err := s.e.eval(r)
	if err != nil {
		return err
	}
	r.at = s.p
	switch x := v.(type) {
	case string:
		return r.write(s.p, x)
	case undefinedValue:
		if err := r.undefinedUse(s.e, v); err != nil {
			return err
		}
		return nil
	case nil:
		return nil
	}
	return r.write(s.p, toString(v))
}

type ifStmt struct {
	conds  []expr
	bodies [][]stmt
	else_  []stmt
}

func (s *ifStmt) exec(r *renderer) error {
	for i, c := range s.conds {
		v, err := c.eval(r)
		if err != nil {
			return err
		}
		if truthy(v) {
			return r.run(s.bodies[i])
		}
	}
	return r.run(s.else_)
}

type forStmt struct {
	names   []string
	bound   []string // names and "loop"
	iter    expr
	body    []stmt
	else_   []stmt
	hasElse bool
	p       pos
}

// loopInfo is the loop variable of a for loop.
type loopInfo struct {
	index, length int
}

func (l *loopInfo) get(key string) any {
	switch key {
	case "index":
		return float64(l.index + 1)
	case "index0":
		return float64(l.index)
	case "revindex":
		return float64(l.length - l.index)
	case "revindex0":
		return float64(l.length - l.index - 1)
	case "first":
		return l.index == 0
	case "last":
		return l.index == l.length-1
	case "length":
		return float64(l.length)
	}
	return undef
}

func (l *loopInfo) object() *Object {
	o := NewObject(7)
	for _, k := range []string{"index", "index0", "revindex", "revindex0", "first", "last", "length"} {
		o.Set(k, l.get(k))
	}
	return o
}

func (s *forStmt) exec(r *renderer) error {
	v, err := s.iter.eval(r)
	if err != nil {
		return err
	}
	if x, ok := v.(*safeString); ok {
		// Nunjucks iterates a SafeString with the string iterator it
		// inherits: by character (code point), not by UTF-16 unit.
		chars := &Array{Items: []any{}}
		for _, c := range x.s {
			chars.Items = append(chars.Items, string(c))
		}
		v = chars
	}
	outer := r.frame
	f := &frame{parent: outer, bound: s.bound}
	r.frame = f
	defer func() { r.frame = outer }()
	n := 0
	if truthy(v) {
		loop := &loopInfo{}
		f.set("loop", loop)
		step := func(i int) error {
			r.iters++
			if r.iters > maxIterations {
				return r.errf(s.p, "more than %d loop iterations", maxIterations)
			}
			if err := r.interrupted(s.p); err != nil {
				return err
			}
			loop.index = i
			return r.run(s.body)
		}
		if len(s.names) == 1 {
			switch x := v.(type) {
			case *Array:
				n = len(x.Items)
				loop.length = n
				for i := 0; i < len(x.Items); i++ {
					f.set(s.names[0], x.Items[i])
					if err := step(i); err != nil {
						return err
					}
				}
			case string:
				js := newJSString(x)
				n = js.len()
				loop.length = n
				for i := 0; i < n; i++ {
					f.set(s.names[0], js.at(i))
					if err := step(i); err != nil {
						return err
					}
				}
			}
		} else if a, ok := v.(*Array); ok {
			n = len(a.Items)
			loop.length = n
			for i := 0; i < len(a.Items); i++ {
				for u, name := range s.names {
					f.set(name, member(a.Items[i], float64(u)))
				}
				if err := step(i); err != nil {
					return err
				}
			}
		} else if _, ok := v.(callable); !ok && !isPrimitive(v) {
			o := asObject(v)
			keys := append([]string(nil), o.keys...)
			n = len(keys)
			loop.length = n
			for i, k := range keys {
				f.set(s.names[0], k)
				f.set(s.names[1], o.vals[k])
				if err := step(i); err != nil {
					return err
				}
			}
		}
	}
	if s.hasElse && n == 0 {
		return r.run(s.else_)
	}
	return nil
}

type setStmt struct {
	targets []string
	value   expr
	body    []stmt
	block   bool
}

func (s *setStmt) exec(r *renderer) error {
	var v any
	if s.block {
		out, err := r.capture(s.body)
		if err != nil {
			return err
		}
		v = out
	} else {
		var err error
		if v, err = s.value.eval(r); err != nil {
			return err
		}
	}
	for _, t := range s.targets {
		r.assign(t, v)
	}
	return nil
}

type macroParamC struct {
	name string
	def  expr
}

type macroStmt struct {
	name   string
	params []macroParamC
	bound  []string // the parameters' names
	body   []stmt
}

func (s *macroStmt) exec(r *renderer) error {
	m := &macro{def: s}
	r.assign(s.name, m)
	return nil
}

// switchStmt is a JavaScript switch: the first case strictly equal to the
// value runs, and so do the cases after it until one whose body breaks;
// the default runs when no case matches (or a case falls into it).
type switchStmt struct {
	expr     expr
	conds    []expr
	bodies   [][]stmt
	breaks   []bool
	default_ []stmt
}

func (s *switchStmt) exec(r *renderer) error {
	v, err := s.expr.eval(r)
	if err != nil {
		return err
	}
	for i, c := range s.conds {
		cv, err := c.eval(r)
		if err != nil {
			return err
		}
		if !strictEqual(v, cv) {
			continue
		}
		for ; i < len(s.bodies); i++ {
			if err := r.run(s.bodies[i]); err != nil {
				return err
			}
			if s.breaks[i] {
				return nil
			}
		}
		return r.run(s.default_)
	}
	return r.run(s.default_)
}

// callerExpr is the caller a {% call %} passes to its macro: a macro of
// the call's body that sees the variables bound where the call stands.
type callerExpr struct {
	def *macroStmt
	base
}

func (e *callerExpr) eval(r *renderer) (any, error) {
	closure := map[string]any{}
	for f := r.frame; f != nil && f != r.root; f = f.parent {
		for _, n := range f.bound {
			if _, seen := closure[n]; !seen {
				closure[n] = f.vars[n]
			}
		}
		if f.closure != nil { // inside another caller: its call site's too
			for n, v := range f.closure {
				if _, seen := closure[n]; !seen {
					closure[n] = v
				}
			}
			break
		}
	}
	return &macro{def: e.def, closure: closure}, nil
}

type filterStmt struct {
	f    *filterExpr
	body []stmt
}

func (s *filterStmt) exec(r *renderer) error {
	in, err := r.capture(s.body)
	if err != nil {
		return err
	}
	v, err := s.f.apply(r, in)
	if err != nil {
		return err
	}
	if isNullish(v) {
		return nil
	}
	return r.write(s.f.where(), toString(v))
}

// ---- expressions ----

type litExpr struct {
	v any
	base
}

func (e *litExpr) eval(*renderer) (any, error) { return e.v, nil }

type nameExpr struct {
	name string
	base
}

func (e *nameExpr) eval(r *renderer) (any, error) { return r.lookup(e.name), nil }

type listExpr struct {
	items []expr
	base
}

func (e *listExpr) eval(r *renderer) (any, error) {
	if err := r.charge(arrayBytes(len(e.items))); err != nil {
		return nil, wrapAt(err, e.where())
	}
	a := &Array{Items: make([]any, len(e.items))}
	for i, it := range e.items {
		v, err := it.eval(r)
		if err != nil {
			return nil, err
		}
		a.Items[i] = v
	}
	return a, nil
}

type dictExpr struct {
	keys, vals []expr
	base
}

func (e *dictExpr) eval(r *renderer) (any, error) {
	o := NewObject(len(e.keys))
	for i := range e.keys {
		k, err := e.keys[i].eval(r)
		if err != nil {
			return nil, err
		}
		v, err := e.vals[i].eval(r)
		if err != nil {
			return nil, err
		}
		o.Set(toString(k), v)
	}
	if err := r.charge(objectBytes(o)); err != nil {
		return nil, wrapAt(err, e.where())
	}
	return o, nil
}

// member is Nunjucks' memberLookup (obj[key]) for property access; calling
// a method goes through methodExpr instead.
func member(obj, key any) any {
	if isNullish(obj) {
		return undef
	}
	return memberKey(obj, propertyKey(key))
}

// memberKey is member with the key already a property key (what a
// template's obj.name reads, without converting name to a value).
func memberKey(obj any, key string) any {
	switch x := obj.(type) {
	case undefinedValue, nil:
		return undef
	case *Object:
		if v, ok := x.vals[key]; ok {
			return v
		}
		return undef
	case *Array:
		k := key
		if k == "length" {
			return float64(len(x.Items))
		}
		if i, ok := arrayIndex(k); ok {
			if i < uint64(len(x.Items)) {
				return x.Items[i]
			}
			return undef
		}
		if _, ok := arrayMethods[k]; ok {
			return &boundMethod{recv: x, name: k}
		}
		return undef
	case string:
		k := key
		js := newJSString(x)
		if k == "length" {
			return float64(js.len())
		}
		if i, ok := arrayIndex(k); ok {
			if i < uint64(js.len()) {
				return js.at(int(i))
			}
			return undef
		}
		if _, ok := stringMethods[k]; ok {
			return &boundMethod{recv: x, name: k}
		}
		return undef
	case float64:
		if _, ok := numberMethods[key]; ok {
			return &boundMethod{recv: x, name: key}
		}
	case *loopInfo:
		return x.get(key)
	case *regExp:
		return x.member(key)
	case *safeString:
		return x.member(key)
	case *cycler:
		switch key {
		case "current":
			return x.current
		case "next", "reset":
			return &boundMethod{recv: x, name: key}
		}
	}
	return undef
}

// propertyKey is ToPropertyKey: numbers print as JavaScript prints them.
func propertyKey(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case float64:
		return formatNumber(x)
	}
	return toString(k)
}

type memberExpr struct {
	obj expr
	key string
	dyn expr
	base
}

func (e *memberExpr) eval(r *renderer) (any, error) {
	o, err := e.obj.eval(r)
	if err != nil {
		return nil, err
	}
	if r.strict && isNullish(o) {
		what := "undefined"
		if o == nil {
			what = "null"
		}
		return nil, r.errf(e.obj.where(), "%s is %s, so %s cannot be read (strict mode)", e.obj.text(), what, e.text())
	}
	if e.dyn == nil {
		return memberKey(o, e.key), nil
	}
	k, err := e.dyn.eval(r)
	if err != nil {
		return nil, err
	}
	return member(o, k), nil
}

type callExpr struct {
	fn   expr
	args []expr
	kw   []kwArg
	base
}

func (r *renderer) evalArgs(args []expr, kw []kwArg) ([]any, *Object, error) {
	vals := make([]any, len(args))
	for i, a := range args {
		v, err := a.eval(r)
		if err != nil {
			return nil, nil, err
		}
		vals[i] = v
	}
	var kwo *Object
	if len(kw) > 0 {
		kwo = NewObject(len(kw))
		for _, k := range kw {
			v, err := k.e.eval(r)
			if err != nil {
				return nil, nil, err
			}
			kwo.Set(k.name, v)
		}
	}
	return vals, kwo, nil
}

func (e *callExpr) eval(r *renderer) (any, error) {
	fn, err := e.fn.eval(r)
	if err != nil {
		return nil, err
	}
	c, ok := fn.(callable)
	if !ok {
		if !truthy(fn) {
			return nil, r.errf(e.where(), "Unable to call `%s`, which is undefined or falsey", e.fn.text())
		}
		return nil, r.errf(e.where(), "Unable to call `%s`, which is not a function", e.fn.text())
	}
	args, kw, err := r.evalArgs(e.args, e.kw)
	if err != nil {
		return nil, err
	}
	return r.call(c, nil, args, kw, e.where())
}

// call calls c, checking the render's context first and charging what it
// returns (a macro's output is charged as it is written).
func (r *renderer) call(c callable, recv any, args []any, kw *Object, p pos) (any, error) {
	if err := r.interrupted(p); err != nil {
		return nil, err
	}
	r.at = p
	v, err := c.call(r, args, kw)
	if err == nil {
		if _, isMacro := c.(*macro); !isMacro {
			err = r.chargeResult(v, recv, args)
		}
	}
	if err != nil {
		return nil, wrapAt(err, p)
	}
	return v, nil
}

type methodExpr struct {
	obj  expr
	name string
	args []expr
	kw   []kwArg
	base
}

func (e *methodExpr) eval(r *renderer) (any, error) {
	o, err := e.obj.eval(r)
	if err != nil {
		return nil, err
	}
	if r.strict && isNullish(o) {
		return nil, r.errf(e.obj.where(), "%s is %s, so .%s() cannot be called (strict mode)", e.obj.text(), jsType(o), e.name)
	}
	fn := memberKey(o, e.name)
	c, ok := fn.(callable)
	if !ok {
		if !truthy(fn) {
			return nil, r.errf(e.where(), "Unable to call `%s[\"%s\"]`, which is undefined or falsey", e.obj.text(), e.name)
		}
		return nil, r.errf(e.where(), "Unable to call `%s[\"%s\"]`, which is not a function", e.obj.text(), e.name)
	}
	args, kw, err := r.evalArgs(e.args, e.kw)
	if err != nil {
		return nil, err
	}
	return r.call(c, o, args, kw, e.where())
}

// wrapAt gives a positionless error from a function the call's position.
func wrapAt(err error, p pos) error {
	if te, ok := err.(*Error); ok && te.Line == 0 {
		te.Line, te.Col = p.line, p.col
		return te
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Line: p.line, Col: p.col, Msg: err.Error(), Cause: err}
}

type filterExpr struct {
	in   expr
	name string
	fn   filterFunc
	args []expr
	kw   []kwArg
	base
}

func (e *filterExpr) eval(r *renderer) (any, error) {
	v, err := e.in.eval(r)
	if err != nil {
		return nil, err
	}
	if e.name != "default" && e.name != "d" {
		if err := r.undefinedUse(e.in, v); err != nil {
			return nil, err
		}
	}
	return e.apply(r, v)
}

func (e *filterExpr) apply(r *renderer, in any) (any, error) {
	args, kw, err := r.evalArgs(e.args, e.kw)
	if err != nil {
		return nil, err
	}
	p := e.where()
	if err := r.interrupted(p); err != nil {
		return nil, err
	}
	r.at = p
	v, err := e.fn(r, in, args, kw)
	if err == nil {
		err = r.chargeResult(v, in, args)
	}
	if err != nil {
		if te, ok := err.(*Error); ok {
			if te.Line == 0 {
				te.Line, te.Col, te.Msg = p.line, p.col, "filter "+e.name+": "+te.Msg
			}
			return nil, te
		}
		return nil, &Error{Line: p.line, Col: p.col, Msg: fmt.Sprintf("filter %s: %v", e.name, err), Cause: err}
	}
	return v, nil
}

type testExpr struct {
	in   expr
	name string
	fn   testFunc
	args []expr
	base
}

func (e *testExpr) eval(r *renderer) (any, error) {
	v, err := e.in.eval(r)
	if err != nil {
		return nil, err
	}
	args, _, err := r.evalArgs(e.args, nil)
	if err != nil {
		return nil, err
	}
	ok, err := e.fn(r, v, args)
	if err != nil {
		return nil, r.errf(e.where(), "test %s: %v", e.name, err)
	}
	return ok, nil
}

type inExpr struct {
	needle, hay expr
	base
}

func (e *inExpr) eval(r *renderer) (any, error) {
	k, err := e.needle.eval(r)
	if err != nil {
		return nil, err
	}
	h, err := e.hay.eval(r)
	if err != nil {
		return nil, err
	}
	switch x := h.(type) {
	case *Array:
		for _, it := range x.Items {
			if strictEqual(it, k) {
				return true, nil
			}
		}
		return false, nil
	case string:
		return newJSString(x).indexOf(toString(k), 0) >= 0, nil
	case *Object:
		_, ok := x.vals[propertyKey(k)]
		return ok, nil
	case *safeString:
		return !isUndef(x.member(propertyKey(k))), nil
	}
	return nil, r.errf(e.where(), "Cannot use \"in\" operator to search for \"%s\" in unexpected types.", toString(k))
}

type notExpr struct {
	x expr
	base
}

func (e *notExpr) eval(r *renderer) (any, error) {
	v, err := e.x.eval(r)
	if err != nil {
		return nil, err
	}
	return !truthy(v), nil
}

type andExpr struct {
	l, r expr
	base
}

func (e *andExpr) eval(r *renderer) (any, error) {
	v, err := e.l.eval(r)
	if err != nil || !truthy(v) {
		return v, err
	}
	return e.r.eval(r)
}

type orExpr struct {
	l, r expr
	base
}

func (e *orExpr) eval(r *renderer) (any, error) {
	v, err := e.l.eval(r)
	if err != nil || truthy(v) {
		return v, err
	}
	return e.r.eval(r)
}

type condExpr struct {
	cond, then, alt expr
	base
}

func (e *condExpr) eval(r *renderer) (any, error) {
	c, err := e.cond.eval(r)
	if err != nil {
		return nil, err
	}
	if truthy(c) {
		return e.then.eval(r)
	}
	return e.alt.eval(r)
}

// floorExpr is Math.floor(x), what Nunjucks compiles // into.
type floorExpr struct {
	x expr
	base
}

func (e *floorExpr) eval(r *renderer) (any, error) {
	v, err := e.x.eval(r)
	if err != nil {
		return nil, err
	}
	return math.Floor(toNumber(v)), nil
}

type unaryExpr struct {
	neg bool
	x   expr
	base
}

func (e *unaryExpr) eval(r *renderer) (any, error) {
	v, err := e.x.eval(r)
	if err != nil {
		return nil, err
	}
	if err := r.undefinedUse(e.x, v); err != nil {
		return nil, err
	}
	if e.neg {
		return -toNumber(v), nil
	}
	return toNumber(v), nil
}

type binExpr struct {
	op   string
	l, r expr
	base
}

func (e *binExpr) eval(r *renderer) (any, error) {
	a, err := e.l.eval(r)
	if err != nil {
		return nil, err
	}
	b, err := e.r.eval(r)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "==":
		return looseEqual(a, b), nil
	case "===":
		return strictEqual(a, b), nil
	case "!=":
		return !looseEqual(a, b), nil
	case "!==":
		return !strictEqual(a, b), nil
	case "<", ">", "<=", ">=":
		return relational(e.op, a, b), nil
	}
	if err := r.undefinedUse(e.l, a); err != nil {
		return nil, err
	}
	if err := r.undefinedUse(e.r, b); err != nil {
		return nil, err
	}
	switch e.op {
	case "~":
		r.at = e.where()
		return r.concat(e.where(), toString(a), toString(b))
	case "+":
		r.at = e.where()
		pa, pb := toPrimitive(a), toPrimitive(b)
		_, aStr := pa.(string)
		_, bStr := pb.(string)
		if aStr || bStr {
			return r.concat(e.where(), toString(pa), toString(pb))
		}
		return toNumber(pa) + toNumber(pb), nil
	case "-":
		return toNumber(a) - toNumber(b), nil
	case "*":
		return toNumber(a) * toNumber(b), nil
	case "/":
		return toNumber(a) / toNumber(b), nil
	case "%":
		return jsMod(toNumber(a), toNumber(b)), nil
	case "**":
		return jsPow(toNumber(a), toNumber(b)), nil
	}
	return nil, r.errf(e.where(), "unsupported operator %s", e.op)
}

// concat joins two strings, charging the result before it is built.
func (r *renderer) concat(p pos, a, b string) (any, error) {
	if err := r.charge(len(a) + len(b)); err != nil {
		return nil, wrapAt(err, p)
	}
	return joinHalves(a, b), nil
}

// jsMod is JavaScript's %: the result has the dividend's sign.
func jsMod(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || b == 0 {
		return math.NaN()
	}
	if math.IsInf(b, 0) {
		return a
	}
	return math.Mod(a, b)
}

// jsPow is Math.pow, which differs from math.Pow for 1**±Inf and (-1)**±Inf.
func jsPow(a, b float64) float64 {
	if math.IsNaN(b) || (math.Abs(a) == 1 && math.IsInf(b, 0)) {
		return math.NaN()
	}
	return math.Pow(a, b)
}
