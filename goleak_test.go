package hostforge_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// leakChecked are packages whose tests must check for leaked goroutines
// even when no file of theirs starts one: they drive code that does
// (runtimes, clocks, fakes, clients) and a leak there would go unseen.
var leakChecked = []string{"bmc", "dhcp", "enrollment", "ironic", "verify", "flow", "firmware", "extensions", "fakes"}

// TestPackagesThatStartGoroutinesCheckForLeaks: every package with tests
// that starts a goroutine (a go statement, an httptest server) in its code
// or its tests — and every package of leakChecked — verifies in its
// TestMain that none is left behind (go.uber.org/goleak).
func TestPackagesThatStartGoroutinesCheckForLeaks(t *testing.T) {
	type pkg struct {
		tests, starts, checks bool
	}
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkg{}
			pkgs[dir] = p
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		test := strings.HasSuffix(path, "_test.go")
		p.tests = p.tests || test
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				p.starts = true
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "httptest" && strings.HasPrefix(x.Sel.Name, "New") && strings.Contains(x.Sel.Name, "Server") {
					p.starts = true
				}
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "goleak" && (x.Sel.Name == "VerifyTestMain" || x.Sel.Name == "Find") && test {
					p.checks = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range leakChecked {
		if p := pkgs[d]; p != nil {
			p.starts = true
		} else {
			t.Errorf("package %s is gone; update leakChecked", d)
		}
	}
	var missing []string
	for dir, p := range pkgs {
		if p.tests && p.starts && !p.checks {
			missing = append(missing, dir)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("these packages start goroutines but their TestMain calls neither goleak.VerifyTestMain nor goleak.Find:\n  %s", strings.Join(missing, "\n  "))
	}
}
