package nunjucks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// crMark stands for a carriage return while gonja lexes the template:
// gonja folds CR LF into LF, Nunjucks keeps both. It is a Unicode
// noncharacter, which never appears in text.
const crMark = '\uFDD0'

// pos is a 1-based position in the template.
type pos struct{ line, col int }

func at(t *tokens.Token) pos {
	if t == nil {
		return pos{}
	}
	return pos{t.Line, t.Col}
}

// compiler turns gonja's syntax tree into our statements and expressions.
type compiler struct {
	toks  []*tokens.Token
	index map[int]int // token Pos → index in toks
	match []int       // index of the matching bracket, or -1
	src   *source
}

func newCompiler(toks []*tokens.Token, src *source) *compiler {
	c := &compiler{toks: toks, index: make(map[int]int, len(toks)), match: make([]int, len(toks)), src: src}
	var stack []int
	for i, t := range toks {
		c.index[t.Pos] = i
		c.match[i] = -1
		switch t.Type {
		case tokens.LeftParenthesis, tokens.LeftBracket, tokens.LeftBrace:
			stack = append(stack, i)
		case tokens.RightParenthesis, tokens.RightBracket, tokens.RightBrace:
			if n := len(stack); n > 0 {
				c.match[i], c.match[stack[n-1]] = stack[n-1], i
				stack = stack[:n-1]
			}
		case tokens.VariableEnd, tokens.BlockEnd:
			stack = stack[:0]
		}
	}
	return c
}

func (c *compiler) errf(p pos, format string, args ...any) error {
	return &Error{Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

func (c *compiler) stmts(ns []nodes.Node) ([]stmt, error) {
	out := make([]stmt, 0, len(ns))
	for _, n := range ns {
		s, err := c.stmt(n)
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

func (c *compiler) wrapper(w *nodes.Wrapper) ([]stmt, error) {
	if w == nil {
		return nil, nil
	}
	return c.stmts(w.Nodes)
}

func restoreCR(s string) string {
	if strings.ContainsRune(s, crMark) {
		return strings.ReplaceAll(s, string(crMark), "\r")
	}
	return s
}

func (c *compiler) stmt(n nodes.Node) (stmt, error) {
	switch x := n.(type) {
	case *nodes.Data:
		s := restoreCR(x.Data.Val)
		if x.Trim.Left {
			s = trimLeftJS(s)
		}
		if x.Trim.Right {
			s = trimRightJS(s)
		}
		if s == "" {
			return nil, nil
		}
		return &textStmt{s: s, p: at(x.Data)}, nil
	case *nodes.Comment:
		if text, ok := c.src.raws[x.Start.Pos]; ok && text != "" {
			return &textStmt{s: text, p: at(x.Start)}, nil
		}
		return nil, nil
	case *nodes.Output:
		e, err := c.expr(x.Expression)
		if err != nil {
			return nil, err
		}
		if x.Condition != nil {
			e, err = c.cond(e, x.Condition, x.Alternative)
			if err != nil {
				return nil, err
			}
		}
		return &outputStmt{e: e, p: at(x.Start)}, nil
	case *nodes.ControlStructureBlock:
		return c.tag(x)
	}
	return nil, c.errf(at(n.Position()), "unsupported template element %s", n)
}

// cond builds "then if cond else alt"; a missing alt is the empty string,
// as in Nunjucks.
func (c *compiler) cond(then expr, cond, alt nodes.Expression) (expr, error) {
	ce, err := c.expr(cond)
	if err != nil {
		return nil, err
	}
	var ae expr = &litExpr{v: "", base: base{p: at(cond.Position()), src: `""`}}
	if alt != nil {
		if ae, err = c.expr(alt); err != nil {
			return nil, err
		}
	}
	return &condExpr{cond: ce, then: then, alt: ae, base: base{p: then.where(), src: then.text() + " if " + ce.text()}}, nil
}

func (c *compiler) tag(b *nodes.ControlStructureBlock) (stmt, error) {
	switch t := b.ControlStructure.(type) {
	case *ifTag:
		s := &ifStmt{}
		for i, cn := range t.conds {
			e, err := c.expr(cn)
			if err != nil {
				return nil, err
			}
			body, err := c.wrapper(t.bodies[i])
			if err != nil {
				return nil, err
			}
			s.conds = append(s.conds, e)
			s.bodies = append(s.bodies, body)
		}
		var err error
		if s.else_, err = c.wrapper(t.else_); err != nil {
			return nil, err
		}
		return s, nil
	case *forTag:
		it, err := c.expr(t.iter)
		if err != nil {
			return nil, err
		}
		body, err := c.wrapper(t.body)
		if err != nil {
			return nil, err
		}
		els, err := c.wrapper(t.else_)
		if err != nil {
			return nil, err
		}
		bound := append(append([]string(nil), t.names...), "loop")
		return &forStmt{names: t.names, bound: bound, iter: it, body: body, else_: els, hasElse: t.else_ != nil, p: at(b.Location)}, nil
	case *setTag:
		s := &setStmt{targets: t.targets}
		var err error
		if t.body != nil {
			s.body, err = c.wrapper(t.body)
			s.block = true
		} else {
			s.value, err = c.expr(t.value)
			if err == nil && t.cond != nil {
				s.value, err = c.cond(s.value, t.cond, t.alt)
			}
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	case *macroTag:
		params, err := c.macroParams(t.params)
		if err != nil {
			return nil, err
		}
		m := &macroStmt{name: t.name, params: params, bound: paramNames(params)}
		if m.body, err = c.wrapper(t.body); err != nil {
			return nil, err
		}
		return m, nil
	case *filterTag:
		f, err := c.filterCall(nil, t.call)
		if err != nil {
			return nil, err
		}
		body, err := c.wrapper(t.body)
		if err != nil {
			return nil, err
		}
		return &filterStmt{f: f.(*filterExpr), body: body}, nil
	case *rawTag:
		return &textStmt{s: restoreCR(t.text), p: at(t.at)}, nil
	case *callTag:
		return c.callTag(t, at(b.Location))
	case *switchTag:
		return c.switchTag(t)
	}
	return nil, c.errf(at(b.Location), "{%% %s %%} is not supported", b.Name)
}

// ---- expressions ----

// base carries an expression's position and source text for messages.
type base struct {
	p   pos
	src string
}

func (b base) where() pos   { return b.p }
func (b base) text() string { return b.src }
func quote(s string) string { return strconv.Quote(s) }
func ellipsis(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

func (c *compiler) exprs(ns []nodes.Expression) ([]expr, error) {
	out := make([]expr, 0, len(ns))
	for _, n := range ns {
		e, err := c.expr(n)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (c *compiler) kwargs(m map[string]nodes.Expression) ([]kwArg, error) {
	if len(m) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	out := make([]kwArg, 0, len(m))
	for _, k := range keys {
		e, err := c.expr(m[k])
		if err != nil {
			return nil, err
		}
		out = append(out, kwArg{name: k, e: e})
	}
	return out, nil
}

func (c *compiler) expr(n nodes.Expression) (expr, error) {
	if n == nil {
		return nil, &Error{Msg: "expected an expression"}
	}
	p := at(n.Position())
	switch x := n.(type) {
	case *nodes.String:
		if re, ok := c.src.regexps[x.Location.Pos]; ok {
			return c.regexp(re, p)
		}
		v, ok := c.src.strings[x.Location.Pos]
		if !ok {
			return nil, c.errf(p, "string literal %s not found by the lexer", quote(x.Location.Val))
		}
		return &litExpr{v: v, base: base{p, quote(ellipsis(v))}}, nil
	case *nodes.Integer:
		f, err := strconv.ParseFloat(strings.ReplaceAll(x.Location.Val, "_", ""), 64)
		if err != nil {
			f = float64(x.Val)
		}
		return &litExpr{v: f, base: base{p, x.Location.Val}}, nil
	case *nodes.Float:
		if strings.ContainsAny(x.Location.Val, "eE") {
			return nil, c.errf(p, "number %s: Nunjucks has no exponent notation (it reads 1e3 as a name)", x.Location.Val)
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(x.Location.Val, "_", ""), 64)
		if err != nil {
			f = x.Val
		}
		return &litExpr{v: f, base: base{p, x.Location.Val}}, nil
	case *nodes.Bool:
		switch x.Location.Val {
		case "true":
			return &litExpr{v: true, base: base{p, "true"}}, nil
		case "false":
			return &litExpr{v: false, base: base{p, "false"}}, nil
		}
		// True and False are plain names in Nunjucks.
		return &nameExpr{name: x.Location.Val, base: base{p, x.Location.Val}}, nil
	case *nodes.None:
		return &nameExpr{name: x.Location.Val, base: base{p, x.Location.Val}}, nil
	case *nodes.Name:
		switch x.Name.Val {
		case "none", "null":
			return &litExpr{v: nil, base: base{p, x.Name.Val}}, nil
		}
		return &nameExpr{name: x.Name.Val, base: base{p, x.Name.Val}}, nil
	case *nodes.List:
		items, err := c.exprs(x.Val)
		if err != nil {
			return nil, err
		}
		return &listExpr{items: items, base: base{p, "[...]"}}, nil
	case *nodes.Tuple:
		items, err := c.exprs(x.Val)
		if err != nil {
			return nil, err
		}
		return &listExpr{items: items, base: base{p, "(...)"}}, nil
	case *nodes.Dict:
		d := &dictExpr{base: base{p, "{...}"}}
		for _, pr := range x.Pairs {
			var k expr
			if nm, ok := pr.Key.(*nodes.Name); ok {
				k = &litExpr{v: nm.Name.Val, base: base{at(nm.Name), nm.Name.Val}}
			} else {
				var err error
				if k, err = c.expr(pr.Key); err != nil {
					return nil, err
				}
			}
			v, err := c.expr(pr.Value)
			if err != nil {
				return nil, err
			}
			d.keys, d.vals = append(d.keys, k), append(d.vals, v)
		}
		return d, nil
	case *nodes.GetAttribute:
		obj, err := c.expr(x.Node)
		if err != nil {
			return nil, err
		}
		key := x.Attribute
		if key == "" {
			key = strconv.Itoa(x.Index)
		}
		return &memberExpr{obj: obj, key: key, base: base{at(x.Node.Position()), obj.text() + "." + key}}, nil
	case *nodes.GetItem:
		obj, err := c.expr(x.Node)
		if err != nil {
			return nil, err
		}
		if x.Arg == nil {
			return nil, c.errf(p, "%s[] needs an index", obj.text())
		}
		k, err := c.expr(x.Arg)
		if err != nil {
			return nil, err
		}
		if l, ok := k.(*litExpr); ok {
			if s, ok := l.v.(string); ok {
				return &memberExpr{obj: obj, key: s, base: base{at(x.Node.Position()), obj.text() + "[" + k.text() + "]"}}, nil
			}
		}
		return &memberExpr{obj: obj, dyn: k, base: base{at(x.Node.Position()), obj.text() + "[" + k.text() + "]"}}, nil
	case *nodes.GetSlice:
		return nil, c.errf(p, "Nunjucks has no slice syntax x[a:b]: use .slice(a, b)")
	case *nodes.Call:
		args, err := c.exprs(x.Args)
		if err != nil {
			return nil, err
		}
		kw, err := c.kwargs(x.Kwargs)
		if err != nil {
			return nil, err
		}
		if ga, ok := x.Func.(*nodes.GetAttribute); ok && x.Parent != nil && ga.Attribute != "" {
			obj, err := c.expr(ga.Node)
			if err != nil {
				return nil, err
			}
			return &methodExpr{obj: obj, name: ga.Attribute, args: args, kw: kw,
				base: base{at(ga.Node.Position()), obj.text() + "." + ga.Attribute + "(...)"}}, nil
		}
		fn, err := c.expr(x.Func)
		if err != nil {
			return nil, err
		}
		return &callExpr{fn: fn, args: args, kw: kw, base: base{fn.where(), fn.text() + "(...)"}}, nil
	case *nodes.FilteredExpression:
		e, err := c.expr(x.Expression)
		if err != nil {
			return nil, err
		}
		for _, fc := range x.Filters {
			if e, err = c.filterCall(e, fc); err != nil {
				return nil, err
			}
		}
		return e, nil
	case *nodes.TestExpression:
		return c.test(x)
	case *nodes.Negation:
		if b, ok := x.Term.(*nodes.BinaryExpression); ok && clusterOp(b.Operator.Token.Type) && !c.parenthesized(b) {
			return c.cluster(b, true)
		}
		e, err := c.expr(x.Term)
		if err != nil {
			return nil, err
		}
		return &notExpr{x: e, base: base{at(x.Operator), "not " + e.text()}}, nil
	case *nodes.UnaryExpression:
		e, err := c.expr(x.Term)
		if err != nil {
			return nil, err
		}
		return &unaryExpr{neg: x.Negative, x: e, base: base{at(x.Operator), x.Operator.Val + e.text()}}, nil
	case *nodes.BinaryExpression:
		return c.binary(x)
	case *nodes.Error:
		return nil, c.errf(p, "%v", x.Error)
	}
	return nil, c.errf(p, "unsupported expression %s", n)
}

func (c *compiler) filterCall(in expr, fc *nodes.FilterCall) (expr, error) {
	f, ok := filters[fc.Name]
	if !ok {
		return nil, c.errf(at(fc.Token), "unknown filter %q", fc.Name)
	}
	args, err := c.exprs(fc.Args)
	if err != nil {
		return nil, err
	}
	kw, err := c.kwargs(fc.Kwargs)
	if err != nil {
		return nil, err
	}
	src := fc.Name
	p := at(fc.Token)
	if in != nil {
		src = in.text() + " | " + fc.Name
		p = in.where()
	}
	return &filterExpr{in: in, name: fc.Name, fn: f, args: args, kw: kw, base: base{p, src}}, nil
}

func (c *compiler) test(x *nodes.TestExpression) (expr, error) {
	e, err := c.expr(x.Expression)
	if err != nil {
		return nil, err
	}
	args, err := c.exprs(x.Test.Args)
	if err != nil {
		return nil, err
	}
	name := x.Test.Name
	p := at(x.Test.Token)
	switch name {
	case "in":
		if len(args) != 1 {
			return nil, c.errf(p, "'in' needs one operand on its right")
		}
		return &inExpr{needle: e, hay: args[0], base: base{e.where(), e.text() + " in " + args[0].text()}}, nil
	case "<", ">", "<=", ">=", "==", "!=":
		if len(args) != 1 {
			return nil, c.errf(p, "%s needs one operand on its right", name)
		}
		return &binExpr{op: name, l: e, r: args[0], base: base{e.where(), e.text() + " " + name + " " + args[0].text()}}, nil
	}
	if tl, ok := args1(args); ok {
		// gonja reads "is divisibleby(3, 4)" as one tuple argument.
		args = tl
	}
	fn, ok := tests[name]
	if !ok {
		return nil, c.errf(p, "unknown test %q", name)
	}
	return &testExpr{in: e, name: name, fn: fn, args: args, base: base{e.where(), e.text() + " is " + name}}, nil
}

func args1(args []expr) ([]expr, bool) {
	if len(args) == 1 {
		if l, ok := args[0].(*listExpr); ok && l.src == "(...)" {
			return l.items, true
		}
	}
	return nil, false
}

// Binary operators. Nunjucks 3.2.4 parses arithmetic, concatenation and
// comparison with its own precedence (loosest first: comparison, ~, +, -,
// *, /, //, %), then compiles the tree to JavaScript source without
// parentheses, so JavaScript's precedence decides in the end: "a" ~ 1 + 2
// becomes "a" + "" + 1 + 2, which is "a12"; 2 * 3 % 4 is 2; not a == b is
// (!a) == b. Only // (Math.floor(l / r)), ** (Math.pow) and parenthesized
// groups keep their operands together. We do the same: flatten gonja's
// tree back into source order, rebuild Nunjucks' tree, emit it flat, and
// parse the emitted sequence with JavaScript's precedence.
func (c *compiler) binary(x *nodes.BinaryExpression) (expr, error) {
	op := x.Operator.Token
	if clusterOp(op.Type) {
		return c.cluster(x, false)
	}
	l, err := c.expr(x.Left)
	if err != nil {
		return nil, err
	}
	r, err := c.expr(x.Right)
	if err != nil {
		return nil, err
	}
	bs := base{l.where(), l.text() + " " + op.Val + " " + r.text()}
	switch op.Type {
	case tokens.And:
		return &andExpr{l: l, r: r, base: bs}, nil
	case tokens.Or:
		return &orExpr{l: l, r: r, base: bs}, nil
	case tokens.Power:
		return &binExpr{op: "**", l: l, r: r, base: bs}, nil
	}
	return nil, c.errf(at(op), "unsupported operator %q", op.Val)
}

// clusterOp reports the operators Nunjucks emits as bare JavaScript infix.
func clusterOp(t tokens.Type) bool {
	switch t {
	case tokens.Addition, tokens.Subtraction, tokens.Tilde, tokens.Multiply, tokens.Division,
		tokens.FloorDivision, tokens.Modulo, tokens.Equals, tokens.Ne, tokens.LowerThan,
		tokens.LowerThanOrEqual, tokens.GreaterThan, tokens.GreaterThanOrEqual:
		return true
	}
	return false
}

// cluster compiles a run of infix operators; negate puts a leading "!" on
// the first emitted operand, as Nunjucks compiles "not" in front of one.
func (c *compiler) cluster(x *nodes.BinaryExpression, negate bool) (expr, error) {
	var terms []nodes.Expression
	var ops []*tokens.Token
	c.flatten(x, &terms, &ops)
	cterms := make([]expr, len(terms))
	for i, t := range terms {
		e, err := c.expr(t)
		if err != nil {
			return nil, err
		}
		cterms[i] = e
	}
	opVals := make([]string, len(ops))
	for i, o := range ops {
		opVals[i] = o.Val
		if c.src.strict[o.Pos] {
			opVals[i] += "="
		}
	}
	b := &rebuild{terms: cterms, ops: opVals}
	items := emit(b.level(0))
	if negate {
		first := items[0].atom
		items[0].atom = &notExpr{x: first, base: base{first.where(), "not " + first.text()}}
	}
	return jsParse(items), nil
}

// flatten lists the operands and operators of a run of infix operators in
// source order. A sub-expression the author put in parentheses stays one
// operand.
func (c *compiler) flatten(x *nodes.BinaryExpression, terms *[]nodes.Expression, ops *[]*tokens.Token) {
	for _, side := range []nodes.Expression{x.Left, nil, x.Right} {
		if side == nil {
			*ops = append(*ops, x.Operator.Token)
			continue
		}
		if b, ok := side.(*nodes.BinaryExpression); ok && clusterOp(b.Operator.Token.Type) && !c.parenthesized(b) {
			c.flatten(b, terms, ops)
			continue
		}
		*terms = append(*terms, side)
	}
}

// parenthesized reports whether the source wraps the expression in its own
// pair of parentheses, from the brackets around its tokens.
func (c *compiler) parenthesized(n nodes.Expression) bool {
	l, r, ok := c.span(n)
	if !ok {
		return false
	}
	for changed := true; changed; {
		changed = false
		if l > 0 && c.toks[l-1].Type == tokens.LeftParenthesis && c.match[l-1] > l-1 && c.match[l-1] <= r {
			l--
			changed = true
		}
		if r+1 < len(c.toks) && isCloser(c.toks[r+1].Type) && c.match[r+1] >= l {
			r++
			changed = true
		}
	}
	return l > 0 && r+1 < len(c.toks) && c.toks[l-1].Type == tokens.LeftParenthesis && c.match[l-1] == r+1
}

func isCloser(t tokens.Type) bool {
	return t == tokens.RightParenthesis || t == tokens.RightBracket || t == tokens.RightBrace
}

// span returns indices of the first and the last token of n (the last
// possibly short of closing brackets, which parenthesized extends over).
func (c *compiler) span(n nodes.Node) (int, int, bool) {
	l, okl := c.first(n)
	r, okr := c.last(n)
	return l, r, okl && okr && l <= r
}

func (c *compiler) tok(t *tokens.Token) (int, bool) {
	if t == nil {
		return 0, false
	}
	i, ok := c.index[t.Pos]
	return i, ok
}

func (c *compiler) first(n nodes.Node) (int, bool) {
	switch x := n.(type) {
	case *nodes.BinaryExpression:
		return c.first(x.Left)
	case *nodes.UnaryExpression:
		return c.tok(x.Operator)
	case *nodes.Negation:
		return c.tok(x.Operator)
	case *nodes.GetAttribute:
		return c.first(x.Node)
	case *nodes.GetItem:
		return c.first(x.Node)
	case *nodes.GetSlice:
		return c.first(x.Node)
	case *nodes.Call:
		return c.first(x.Func)
	case *nodes.FilteredExpression:
		return c.first(x.Expression)
	case *nodes.TestExpression:
		return c.first(x.Expression)
	case *nodes.Dict:
		return c.tok(x.Token)
	case *nodes.Name:
		return c.tok(x.Name)
	}
	return c.tok(n.Position())
}

func (c *compiler) last(n nodes.Node) (int, bool) {
	closer := func(t *tokens.Token) (int, bool) {
		i, ok := c.tok(t)
		if !ok || c.match[i] < 0 {
			return 0, false
		}
		return c.match[i], true
	}
	switch x := n.(type) {
	case *nodes.BinaryExpression:
		return c.last(x.Right)
	case *nodes.UnaryExpression:
		return c.last(x.Term)
	case *nodes.Negation:
		return c.last(x.Term)
	case *nodes.GetAttribute:
		i, ok := c.tok(x.Location)
		return i + 1, ok
	case *nodes.GetItem:
		return closer(x.Location)
	case *nodes.GetSlice:
		return closer(x.Location)
	case *nodes.Call:
		return closer(x.Location)
	case *nodes.List:
		return closer(x.Location)
	case *nodes.Tuple:
		return closer(x.Location)
	case *nodes.Dict:
		return closer(x.Token)
	case *nodes.FilteredExpression:
		f := x.Filters[len(x.Filters)-1]
		i, ok := c.tok(f.Token)
		if ok && i+1 < len(c.toks) && c.toks[i+1].Type == tokens.LeftParenthesis && c.match[i+1] > i {
			return c.match[i+1], true
		}
		return i, ok
	case *nodes.TestExpression:
		if len(x.Test.Args) > 0 {
			return c.last(x.Test.Args[len(x.Test.Args)-1])
		}
		return c.tok(x.Test.Token)
	case *nodes.Name:
		return c.tok(x.Name)
	}
	return c.tok(n.Position())
}

// nunjucksLevel is the level of Nunjucks' parser an operator belongs to,
// loosest first: comparison, ~, +, -, *, /, //, %.
func nunjucksLevel(op string) int {
	switch op {
	case "~":
		return 1
	case "+":
		return 2
	case "-":
		return 3
	case "*":
		return 4
	case "/":
		return 5
	case "//":
		return 6
	case "%":
		return 7
	}
	return 0 // == === != !== < > <= >=
}

// njNode is a node of Nunjucks' tree: an operand, or an operator with two.
type njNode struct {
	op   string
	l, r *njNode
	atom expr
}

// rebuild is Nunjucks' recursive descent over a flattened run, one level
// per operator, each left-associative.
type rebuild struct {
	terms []expr
	ops   []string
	i     int // next term; ops[i-1] precedes terms[i]
}

func (b *rebuild) level(lv int) *njNode {
	if lv > 7 {
		t := b.terms[b.i]
		b.i++
		return &njNode{atom: t}
	}
	node := b.level(lv + 1)
	for b.i <= len(b.ops) && nunjucksLevel(b.ops[b.i-1]) == lv {
		op := b.ops[b.i-1]
		node = &njNode{op: op, l: node, r: b.level(lv + 1)}
	}
	return node
}

// jsItem is one element of the JavaScript Nunjucks emits: an operand or an
// infix operator.
type jsItem struct {
	atom expr
	op   string
}

// emit writes n as Nunjucks' compiler does: ~ as + "" +, // as
// Math.floor(l / r) (one operand), everything else as bare infix.
func emit(n *njNode) []jsItem {
	switch n.op {
	case "":
		return []jsItem{{atom: n.atom}}
	case "~":
		empty := &litExpr{v: "", base: base{n.r.first().where(), `""`}}
		out := append(emit(n.l), jsItem{op: "+"}, jsItem{atom: empty}, jsItem{op: "+"})
		return append(out, emit(n.r)...)
	case "//":
		inner := jsParse(append(append(emit(n.l), jsItem{op: "/"}), emit(n.r)...))
		return []jsItem{{atom: &floorExpr{x: inner, base: base{inner.where(), inner.text()}}}}
	}
	return append(append(emit(n.l), jsItem{op: n.op}), emit(n.r)...)
}

func (n *njNode) first() expr {
	for n.op != "" {
		n = n.l
	}
	return n.atom
}

// jsLevel is JavaScript's precedence of the emitted operators.
func jsLevel(op string) int {
	switch op {
	case "==", "!=", "===", "!==":
		return 1
	case "<", ">", "<=", ">=":
		return 2
	case "+", "-":
		return 3
	case "*", "/", "%":
		return 4
	}
	return 0
}

// jsParse builds the expression JavaScript reads from the emitted items:
// precedence climbing, every level left-associative.
func jsParse(items []jsItem) expr {
	i := 0
	var climb func(min int) expr
	climb = func(min int) expr {
		left := items[i].atom
		i++
		for i < len(items) && jsLevel(items[i].op) >= min {
			op := items[i].op
			i++
			right := climb(jsLevel(op) + 1)
			left = &binExpr{op: op, l: left, r: right, base: base{left.where(), left.text() + " " + op + " " + right.text()}}
		}
		return left
	}
	return climb(1)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// macroParams compiles a macro's or caller's parameters.
func (c *compiler) macroParams(params []macroParam) ([]macroParamC, error) {
	var out []macroParamC
	for _, prm := range params {
		mp := macroParamC{name: prm.name}
		if prm.def != nil {
			d, err := c.expr(prm.def)
			if err != nil {
				return nil, err
			}
			mp.def = d
		}
		out = append(out, mp)
	}
	return out, nil
}

func paramNames(params []macroParamC) []string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return names
}

// callTag compiles {% call %}: the macro call, with the caller as one more
// keyword argument, printed.
func (c *compiler) callTag(t *callTag, p pos) (stmt, error) {
	e, err := c.expr(t.call)
	if err != nil {
		return nil, err
	}
	params, err := c.macroParams(t.params)
	if err != nil {
		return nil, err
	}
	body, err := c.wrapper(t.body)
	if err != nil {
		return nil, err
	}
	caller := kwArg{name: "caller", e: &callerExpr{def: &macroStmt{name: "caller", params: params, bound: paramNames(params), body: body}, base: base{p, "caller"}}}
	switch x := e.(type) {
	case *callExpr:
		x.kw = append(x.kw, caller)
	case *methodExpr:
		x.kw = append(x.kw, caller)
	default:
		return nil, c.errf(p, "call expects a macro call, such as {%% call list(items) %%}")
	}
	return &outputStmt{e: e, p: p}, nil
}

// switchTag compiles {% switch %}. A case whose body has nothing in it (not
// even white space; a comment is nothing) falls through to the next, as
// the JavaScript switch Nunjucks compiles it to does.
func (c *compiler) switchTag(t *switchTag) (stmt, error) {
	e, err := c.expr(t.expr)
	if err != nil {
		return nil, err
	}
	s := &switchStmt{expr: e}
	for i, cn := range t.conds {
		var cond expr = &nameExpr{name: "default", base: base{at(t.at), "default"}}
		if cn != nil {
			if cond, err = c.expr(cn); err != nil {
				return nil, err
			}
		}
		body, err := c.wrapper(t.bodies[i])
		if err != nil {
			return nil, err
		}
		s.conds, s.bodies = append(s.conds, cond), append(s.bodies, body)
		s.breaks = append(s.breaks, c.hasNodes(t.bodies[i]))
	}
	if t.default_ != nil {
		if s.default_, err = c.wrapper(t.default_); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// hasNodes reports whether Nunjucks' parser puts anything in a block body:
// text (even if white-space control leaves it empty), a tag, a raw block;
// a comment is not anything.
func (c *compiler) hasNodes(w *nodes.Wrapper) bool {
	for _, n := range w.Nodes {
		if cm, ok := n.(*nodes.Comment); ok {
			if _, raw := c.src.raws[cm.Start.Pos]; !raw {
				continue
			}
		}
		return true
	}
	return false
}
