package nunjucks

import (
	"fmt"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// The tags gonja parses for us. Each parser reads the tag's arguments
// with gonja's expression parser and returns a node of ours; compile turns
// these into statements with Nunjucks semantics (for example, a {% set %}
// inside a loop updates a variable of the enclosing scope, as in Nunjucks
// and unlike Jinja).
var controlStructures = exec.NewControlStructureSet(map[string]parser.ControlStructureParser{
	"if":     parseIf,
	"for":    parseFor,
	"set":    parseSet,
	"macro":  parseMacro,
	"filter": parseFilterTag,
	"raw":    parseRaw,
	"call":   parseCall,
	"switch": parseSwitch,
})

// unsupportedTags name tags Nunjucks has that an extension template, a
// single string with no loader, cannot use; they fail with a clear
// message instead of "not found".
var unsupportedTags = []string{"include", "import", "from", "extends", "block", "asyncEach", "asyncAll", "ifAsync"}

func init() {
	for _, name := range unsupportedTags {
		n := name
		_ = controlStructures.Register(n, func(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
			return nil, fmt.Errorf("{%% %s %%} is not supported: an extension template is one self-contained string", n)
		})
	}
}

type ifTag struct {
	at     *tokens.Token
	conds  []nodes.Expression
	bodies []*nodes.Wrapper
	else_  *nodes.Wrapper
}

func (t *ifTag) Position() *tokens.Token { return t.at }
func (t *ifTag) String() string          { return "if" }

func parseIf(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	t := &ifTag{at: args.Current()}
	cond, err := tagExpression(args, "if")
	if err != nil {
		return nil, err
	}
	t.conds = append(t.conds, cond)
	for {
		body, tagArgs, err := p.WrapUntil("elif", "elseif", "else", "endif")
		if err != nil {
			return nil, err
		}
		t.bodies = append(t.bodies, body)
		switch body.EndTag {
		case "elif", "elseif":
			cond, err := tagExpression(tagArgs, body.EndTag)
			if err != nil {
				return nil, err
			}
			t.conds = append(t.conds, cond)
		case "else":
			if !tagArgs.End() {
				return nil, tagArgs.Error("else takes no arguments", tagArgs.Current())
			}
			els, endArgs, err := p.WrapUntil("endif")
			if err != nil {
				return nil, err
			}
			if !endArgs.End() {
				return nil, endArgs.Error("endif takes no arguments", endArgs.Current())
			}
			t.else_ = els
			return t, nil
		default: // endif
			if !tagArgs.End() {
				return nil, tagArgs.Error("endif takes no arguments", tagArgs.Current())
			}
			return t, nil
		}
	}
}

// tagExpression parses the one expression a tag takes.
func tagExpression(args *parser.Parser, tag string) (nodes.Expression, error) {
	if args.End() {
		return nil, fmt.Errorf("%s needs an expression", tag)
	}
	e, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, args.Error(tag+" needs an expression", args.Current())
	}
	if !args.End() {
		return nil, args.Error("unexpected "+args.Current().Val+" after the "+tag+" expression", args.Current())
	}
	return e, nil
}

type forTag struct {
	at    *tokens.Token
	names []string
	iter  nodes.Expression
	body  *nodes.Wrapper
	else_ *nodes.Wrapper
}

func (t *forTag) Position() *tokens.Token { return t.at }
func (t *forTag) String() string          { return "for" }

func parseFor(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	t := &forTag{at: args.Current()}
	for {
		name := args.Match(tokens.Name)
		if name == nil {
			return nil, args.Error("for expects a variable name", args.Current())
		}
		t.names = append(t.names, name.Val)
		if args.Match(tokens.Comma) == nil {
			break
		}
	}
	if args.Match(tokens.In) == nil {
		return nil, args.Error("for expects 'in' after the loop variables", args.Current())
	}
	iter, err := tagExpression(args, "for")
	if err != nil {
		return nil, err
	}
	t.iter = iter
	body, endArgs, err := p.WrapUntil("else", "endfor")
	if err != nil {
		return nil, err
	}
	if !endArgs.End() {
		return nil, endArgs.Error(body.EndTag+" takes no arguments", endArgs.Current())
	}
	t.body = body
	if body.EndTag == "else" {
		els, endArgs, err := p.WrapUntil("endfor")
		if err != nil {
			return nil, err
		}
		if !endArgs.End() {
			return nil, endArgs.Error("endfor takes no arguments", endArgs.Current())
		}
		t.else_ = els
	}
	return t, nil
}

type setTag struct {
	at      *tokens.Token
	targets []string
	value   nodes.Expression
	cond    nodes.Expression // value if cond else alt
	alt     nodes.Expression
	body    *nodes.Wrapper // block form
}

func (t *setTag) Position() *tokens.Token { return t.at }
func (t *setTag) String() string          { return "set" }

func parseSet(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	t := &setTag{at: args.Current()}
	for {
		name := args.Match(tokens.Name)
		if name == nil {
			return nil, args.Error("set expects a variable name", args.Current())
		}
		t.targets = append(t.targets, name.Val)
		if args.Match(tokens.Comma) == nil {
			break
		}
	}
	if args.Match(tokens.Assign) == nil {
		if !args.End() {
			return nil, args.Error("set expects '=' or the end of the tag", args.Current())
		}
		body, endArgs, err := p.WrapUntil("endset")
		if err != nil {
			return nil, err
		}
		if !endArgs.End() {
			return nil, endArgs.Error("endset takes no arguments", endArgs.Current())
		}
		t.body = body
		return t, nil
	}
	if args.End() {
		return nil, fmt.Errorf("set needs a value after '='")
	}
	v, err := args.ParseExpression()
	if err != nil {
		return nil, err
	}
	t.value = v
	cond, alt, err := args.ParseCondition()
	if err != nil {
		return nil, err
	}
	t.cond, t.alt = cond, alt
	if !args.End() {
		return nil, args.Error("unexpected "+args.Current().Val+" in set", args.Current())
	}
	return t, nil
}

type macroParam struct {
	name string
	def  nodes.Expression // nil: no default
}

type macroTag struct {
	at     *tokens.Token
	name   string
	params []macroParam
	body   *nodes.Wrapper
}

func (t *macroTag) Position() *tokens.Token { return t.at }
func (t *macroTag) String() string          { return "macro " + t.name }

func parseMacro(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	t := &macroTag{at: args.Current()}
	name := args.Match(tokens.Name)
	if name == nil {
		return nil, args.Error("macro expects a name", args.Current())
	}
	t.name = name.Val
	if args.Match(tokens.LeftParenthesis) == nil {
		return nil, args.Error("macro expects '(' after its name", args.Current())
	}
	params, err := parseParams(args, "macro "+t.name)
	if err != nil {
		return nil, err
	}
	t.params = params
	if !args.End() {
		return nil, args.Error("unexpected "+args.Current().Val+" after the macro parameters", args.Current())
	}
	body, endArgs, err := p.WrapUntil("endmacro")
	if err != nil {
		return nil, err
	}
	if !endArgs.End() {
		return nil, endArgs.Error("endmacro takes no arguments", endArgs.Current())
	}
	t.body = body
	return t, nil
}

// parseParams reads a macro's or caller's parameters after the opening
// parenthesis: names, each with an optional default.
func parseParams(args *parser.Parser, what string) ([]macroParam, error) {
	var params []macroParam
	for args.Match(tokens.RightParenthesis) == nil {
		if len(params) > 0 && args.Match(tokens.Comma) == nil {
			return nil, args.Error("parameters are separated by ','", args.Current())
		}
		pn := args.Match(tokens.Name)
		if pn == nil {
			return nil, args.Error("a parameter must be a name", args.Current())
		}
		prm := macroParam{name: pn.Val}
		if args.Match(tokens.Assign) != nil {
			d, err := args.ParseExpression()
			if err != nil {
				return nil, err
			}
			prm.def = d
		}
		params = append(params, prm)
		if args.End() {
			return nil, fmt.Errorf("%s: missing ')'", what)
		}
	}
	return params, nil
}

// callTag is {% call [(params)] macro(args) %}body{% endcall %}: the
// macro is called with one more keyword argument, caller, a macro whose
// body is the tag's body.
type callTag struct {
	at     *tokens.Token
	params []macroParam
	call   nodes.Expression
	body   *nodes.Wrapper
}

func (t *callTag) Position() *tokens.Token { return t.at }
func (t *callTag) String() string          { return "call" }

func parseCall(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	t := &callTag{at: args.Current()}
	if args.Match(tokens.LeftParenthesis) != nil {
		params, err := parseParams(args, "call")
		if err != nil {
			return nil, err
		}
		t.params = params
	}
	call, err := tagExpression(args, "call")
	if err != nil {
		return nil, err
	}
	if _, ok := call.(*nodes.Call); !ok {
		return nil, args.Error("call expects a macro call, such as {% call list(items) %}", t.at)
	}
	t.call = call
	body, endArgs, err := p.WrapUntil("endcall")
	if err != nil {
		return nil, err
	}
	if !endArgs.End() {
		return nil, endArgs.Error("endcall takes no arguments", endArgs.Current())
	}
	t.body = body
	return t, nil
}

// switchTag is {% switch expr %}{% case a %}...{% default %}...{% endswitch %}.
type switchTag struct {
	at       *tokens.Token
	expr     nodes.Expression
	conds    []nodes.Expression
	bodies   []*nodes.Wrapper
	default_ *nodes.Wrapper
}

func (t *switchTag) Position() *tokens.Token { return t.at }
func (t *switchTag) String() string          { return "switch" }

// parseSwitch reads a switch as Nunjucks' parser does: what stands before
// the first case is dropped, default (if any) comes last, and a default
// where the first case should be is read as a case whose value is the
// variable named default.
func parseSwitch(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	t := &switchTag{at: args.Current()}
	e, err := tagExpression(args, "switch")
	if err != nil {
		return nil, err
	}
	t.expr = e
	first, tagArgs, err := p.WrapUntil("case", "default", "endswitch")
	if err != nil {
		return nil, err
	}
	end := first.EndTag
	switch end {
	case "endswitch":
		return nil, args.Error("switch needs at least one case", t.at)
	case "default":
		end = "case" // Nunjucks reads it as "case default"
	}
	for end == "case" {
		var cond nodes.Expression // nil: the variable named default
		if first == nil || first.EndTag == "case" {
			if cond, err = tagExpression(tagArgs, "case"); err != nil {
				return nil, err
			}
		} else if !tagArgs.End() {
			return nil, tagArgs.Error("unexpected "+tagArgs.Current().Val, tagArgs.Current())
		}
		first = nil
		body, next, err := p.WrapUntil("case", "default", "endswitch")
		if err != nil {
			return nil, err
		}
		t.conds, t.bodies = append(t.conds, cond), append(t.bodies, body)
		end, tagArgs = body.EndTag, next
	}
	if end == "default" {
		if !tagArgs.End() {
			return nil, tagArgs.Error("default takes no arguments", tagArgs.Current())
		}
		body, next, err := p.WrapUntil("endswitch")
		if err != nil {
			return nil, err
		}
		t.default_, tagArgs = body, next
	}
	if !tagArgs.End() {
		return nil, tagArgs.Error("endswitch takes no arguments", tagArgs.Current())
	}
	return t, nil
}

type filterTag struct {
	at   *tokens.Token
	call *nodes.FilterCall
	body *nodes.Wrapper
}

func (t *filterTag) Position() *tokens.Token { return t.at }
func (t *filterTag) String() string          { return "filter" }

func parseFilterTag(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	t := &filterTag{at: args.Current()}
	fc, err := args.ParseFilter()
	if err != nil {
		return nil, err
	}
	if !args.End() {
		return nil, args.Error("unexpected "+args.Current().Val+" after the filter", args.Current())
	}
	t.call = fc
	body, endArgs, err := p.WrapUntil("endfilter")
	if err != nil {
		return nil, err
	}
	if !endArgs.End() {
		return nil, endArgs.Error("endfilter takes no arguments", endArgs.Current())
	}
	t.body = body
	return t, nil
}

type rawTag struct {
	at   *tokens.Token
	text string
}

func (t *rawTag) Position() *tokens.Token { return t.at }
func (t *rawTag) String() string          { return "raw" }

func parseRaw(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	if !args.End() {
		return nil, args.Error("raw takes no arguments", args.Current())
	}
	t := &rawTag{at: p.Current()}
	body, _, err := p.WrapUntil("endraw")
	if err != nil {
		return nil, err
	}
	for _, n := range body.Nodes {
		d, ok := n.(*nodes.Data)
		if !ok {
			return nil, p.Error("raw holds text only", n.Position())
		}
		t.text += d.Data.Val
	}
	return t, nil
}
