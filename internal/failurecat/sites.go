package failurecat

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// modulePath is the module's import path: imports under it name a
// package directory of the module.
const modulePath = "github.com/hostforge/hostforge"

// Site is one place in the source that raises a declared code: a call
// Spec.New(format, ...) or Spec.Wrap(err, format, ...) (through At or not)
// on a declared spec, or a SystemSpecs entry mapping a kind of system
// error to it.
type Site struct {
	Code string
	// Package is the directory of the raising package, relative to the
	// module root; Func the enclosing function ("" at package level).
	Package, Func string
	// Message is the format string, or "system error: <kind>" for a
	// SystemSpecs entry, or "" when the format is not a literal.
	Message string
	// Pos is file:line, for messages.
	Pos string
}

// specRef names a declared spec variable: its package directory and name.
type specRef struct{ pkg, name string }

// parsedFile is one non-test file with the import names it uses.
type parsedFile struct {
	f       *ast.File
	fset    *token.FileSet
	pkg     string
	imports map[string]string // local name -> package directory
}

// Sites returns every place in the module's non-test source that raises a
// declared code, sorted by code, package and position.
func Sites(root string) ([]Site, error) {
	files, err := parseModule(root)
	if err != nil {
		return nil, err
	}
	specs := map[specRef]string{}
	aliases := map[specRef]ast.Expr{}
	aliasFile := map[specRef]*parsedFile{}
	for _, pf := range files {
		for _, decl := range pf.f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					ref := specRef{pf.pkg, name.Name}
					if call, ok := vs.Values[i].(*ast.CallExpr); ok && isDeclare(call.Fun) && len(call.Args) == 1 {
						if code := codeOf(call.Args[0]); code != "" {
							specs[ref] = code
						}
						continue
					}
					switch vs.Values[i].(type) {
					case *ast.Ident, *ast.SelectorExpr, *ast.CallExpr:
						aliases[ref], aliasFile[ref] = vs.Values[i], pf
					}
				}
			}
		}
	}
	// An alias is a variable set to another spec (ConfigInvalid =
	// wiring.ConfigInvalid, X = Y.At("phase")).
	for changed := true; changed; {
		changed = false
		for ref, x := range aliases {
			if _, done := specs[ref]; done {
				continue
			}
			if code := resolve(x, aliasFile[ref], specs); code != "" {
				specs[ref] = code
				changed = true
			}
		}
	}
	var out []Site
	for _, pf := range files {
		for _, decl := range pf.f.Decls {
			fn := ""
			if fd, ok := decl.(*ast.FuncDecl); ok {
				fn = fd.Name.Name
				if fd.Recv != nil && len(fd.Recv.List) == 1 {
					fn = recvName(fd.Recv.List[0].Type) + "." + fn
				}
			}
			out = append(out, sitesIn(decl, pf, fn, specs)...)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Pos < b.Pos
	})
	return out, nil
}

// sitesIn finds the raising places in one declaration.
func sitesIn(decl ast.Decl, pf *parsedFile, fn string, specs map[specRef]string) []Site {
	var out []Site
	ast.Inspect(decl, func(n ast.Node) bool {
		switch v := n.(type) {
		case *ast.CallExpr:
			sel, ok := v.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "New" && sel.Sel.Name != "Wrap") {
				return true
			}
			code := resolve(sel.X, pf, specs)
			if code == "" {
				return true
			}
			arg := 0
			if sel.Sel.Name == "Wrap" {
				arg = 1
			}
			msg := ""
			if arg < len(v.Args) {
				msg, _ = stringLit(v.Args[arg])
			}
			out = append(out, Site{Code: code, Package: pf.pkg, Func: fn, Message: msg, Pos: position(pf, v.Pos())})
		case *ast.CompositeLit:
			if !isSystemSpecs(v.Type) {
				return true
			}
			for _, elt := range v.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, _ := kv.Key.(*ast.Ident)
				if key == nil {
					continue
				}
				if code := resolve(kv.Value, pf, specs); code != "" {
					out = append(out, Site{Code: code, Package: pf.pkg, Func: fn, Message: "system error: " + key.Name, Pos: position(pf, kv.Pos())})
				}
			}
		}
		return true
	})
	return out
}

func parseModule(root string) ([]*parsedFile, error) {
	var files []*parsedFile
	err := walkSource(root, func(rel string, fset *token.FileSet, f *ast.File) error {
		pf := &parsedFile{f: f, fset: fset, pkg: filepath.ToSlash(rel), imports: map[string]string{}}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != modulePath && !strings.HasPrefix(p, modulePath+"/") {
				continue
			}
			dir := strings.TrimPrefix(strings.TrimPrefix(p, modulePath), "/")
			if dir == "" {
				dir = "."
			}
			name := filepath.Base(p)
			if p == modulePath {
				name = "hostforge"
			}
			if imp.Name != nil {
				name = imp.Name.Name
			}
			pf.imports[name] = dir
		}
		files = append(files, pf)
		return nil
	})
	return files, err
}

// resolve names the code x is a spec of: a declared variable of this
// package or an imported one, or one's At(...).
func resolve(x ast.Expr, pf *parsedFile, specs map[specRef]string) string {
	switch v := x.(type) {
	case *ast.Ident:
		return specs[specRef{pf.pkg, v.Name}]
	case *ast.SelectorExpr:
		if id, ok := v.X.(*ast.Ident); ok {
			if dir, ok := pf.imports[id.Name]; ok {
				return specs[specRef{dir, v.Sel.Name}]
			}
		}
	case *ast.CallExpr:
		if sel, ok := v.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "At" {
			return resolve(sel.X, pf, specs)
		}
	case *ast.UnaryExpr:
		return resolve(v.X, pf, specs)
	case *ast.ParenExpr:
		return resolve(v.X, pf, specs)
	}
	return ""
}

func codeOf(arg ast.Expr) string {
	lit, ok := arg.(*ast.CompositeLit)
	if !ok {
		return ""
	}
	for _, elt := range lit.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if key, _ := kv.Key.(*ast.Ident); key != nil && key.Name == "Code" {
				s, _ := stringLit(kv.Value)
				return s
			}
		}
	}
	return ""
}

func isSystemSpecs(t ast.Expr) bool {
	switch v := t.(type) {
	case *ast.Ident:
		return v.Name == "SystemSpecs"
	case *ast.SelectorExpr:
		return v.Sel.Name == "SystemSpecs"
	}
	return false
}

func recvName(t ast.Expr) string {
	switch v := t.(type) {
	case *ast.StarExpr:
		return recvName(v.X)
	case *ast.Ident:
		return v.Name
	case *ast.IndexExpr:
		return recvName(v.X)
	}
	return "?"
}

func position(pf *parsedFile, p token.Pos) string {
	pos := pf.fset.Position(p)
	return fmt.Sprintf("%s:%d", filepath.Join(pf.pkg, filepath.Base(pos.Filename)), pos.Line)
}
