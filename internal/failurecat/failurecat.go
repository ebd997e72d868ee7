// Package failurecat reads the failure codes declared anywhere in the module
// from its source, and renders the catalogue in docs/failure-codes.md.
//
// It reads source rather than a runtime registry so that every declaration is
// found, including those in packages no single program links (adapters,
// examples). A declaration is a call hostforge.Declare(hostforge.Spec{...})
// (or Declare(Spec{...}) inside the root package) whose fields are literals:
// strings, true/false, and Owner constants.
package failurecat

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Entry is one declared code.
type Entry struct {
	Code, Phase, Owner, Action string
	Retryable                  bool
	// Package is the declaring package's directory, relative to the module root.
	Package string
}

// Scan walks the module rooted at root and returns every declaration, sorted
// by code. It fails on a declaration it cannot read and on duplicate codes.
func Scan(root string) ([]Entry, error) {
	owners, err := ownerConstants(filepath.Join(root, "failure.go"))
	if err != nil {
		return nil, err
	}
	var out []Entry
	seen := map[string]string{}
	err = walkSource(root, func(rel string, fset *token.FileSet, f *ast.File) error {
		var walkErr error
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isDeclare(call.Fun) || len(call.Args) != 1 {
				return true
			}
			e, err := entryOf(call.Args[0], owners)
			if err != nil {
				walkErr = fmt.Errorf("%s: %w", fset.Position(call.Pos()), err)
				return false
			}
			e.Package = filepath.ToSlash(rel)
			if prev, dup := seen[e.Code]; dup {
				walkErr = fmt.Errorf("%s: code %s already declared in %s", fset.Position(call.Pos()), e.Code, prev)
				return false
			}
			seen[e.Code] = e.Package
			out = append(out, e)
			return true
		})
		return walkErr
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out, nil
}

// walkSource parses every non-test Go file of the module rooted at root —
// below hidden, testdata and vendor directories none — and calls fn with
// its directory relative to root, in the walk's (lexical) order.
func walkSource(root string, fn func(rel string, fset *token.FileSet, f *ast.File) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		return fn(rel, fset, f)
	})
}

func isDeclare(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "Declare"
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "hostforge" && f.Sel.Name == "Declare"
	}
	return false
}

func entryOf(arg ast.Expr, owners map[string]string) (Entry, error) {
	lit, ok := arg.(*ast.CompositeLit)
	if !ok {
		return Entry{}, fmt.Errorf("Declare needs a Spec literal")
	}
	var e Entry
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			return Entry{}, fmt.Errorf("Declare needs keyed Spec fields")
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil {
			return Entry{}, fmt.Errorf("Declare needs keyed Spec fields")
		}
		switch key.Name {
		case "Code", "Phase", "Action":
			s, err := stringLit(kv.Value)
			if err != nil {
				return Entry{}, fmt.Errorf("field %s: %w", key.Name, err)
			}
			switch key.Name {
			case "Code":
				e.Code = s
			case "Phase":
				e.Phase = s
			default:
				e.Action = s
			}
		case "Owner":
			name := ""
			switch v := kv.Value.(type) {
			case *ast.Ident:
				name = v.Name
			case *ast.SelectorExpr:
				name = v.Sel.Name
			}
			o, ok := owners[name]
			if !ok {
				return Entry{}, fmt.Errorf("field Owner: want an Owner constant, got %T", kv.Value)
			}
			e.Owner = o
		case "Retryable":
			id, ok := kv.Value.(*ast.Ident)
			if !ok || (id.Name != "true" && id.Name != "false") {
				return Entry{}, fmt.Errorf("field Retryable: want true or false")
			}
			e.Retryable = id.Name == "true"
		}
	}
	if e.Code == "" {
		return Entry{}, fmt.Errorf("Declare without a Code")
	}
	return e, nil
}

// stringLit reads a string literal or a + concatenation of them.
func stringLit(x ast.Expr) (string, error) {
	switch v := x.(type) {
	case *ast.BasicLit:
		if v.Kind != token.STRING {
			return "", fmt.Errorf("want a string literal")
		}
		return strconv.Unquote(v.Value)
	case *ast.BinaryExpr:
		if v.Op != token.ADD {
			return "", fmt.Errorf("want a string literal")
		}
		a, err := stringLit(v.X)
		if err != nil {
			return "", err
		}
		b, err := stringLit(v.Y)
		return a + b, err
	case *ast.ParenExpr:
		return stringLit(v.X)
	}
	return "", fmt.Errorf("want a string literal, got %T", x)
}

// ownerConstants reads the Owner constants (name → value) from the root package.
func ownerConstants(path string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("reading owners: %w", err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					if v, err := stringLit(vs.Values[i]); err == nil {
						out[n.Name] = v
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Owner constants in %s", path)
	}
	return out, nil
}

// Render writes the Markdown catalogue.
func Render(entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString("# Failure codes\n\n")
	b.WriteString("Generated by `go generate ./...` from the `hostforge.Declare` calls in the source; do not edit.\n")
	b.WriteString("A test fails when this file is stale.\n\n")
	b.WriteString("Every error that leaves a hostforge phase is one of these failures or a wait. ")
	b.WriteString("`Retryable` says whether rerunning the same attempt unchanged can succeed; the owner is who acts on it.\n\n")
	b.WriteString("| Code | Phase | Owner | Retryable | Operator action | Declared in |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | `%s` |\n",
			e.Code, cell(e.Phase), e.Owner, yesNo(e.Retryable), cell(e.Action), e.Package)
	}
	return b.Bytes()
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Generate scans root and writes the catalogue to out.
func Generate(root, out string) error {
	entries, err := Scan(root)
	if err != nil {
		return err
	}
	return os.WriteFile(out, Render(entries), 0o644)
}
