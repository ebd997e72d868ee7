package failurecat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const owners = `package hostforge
type Owner string
const (
	OwnerInfraEng Owner = "INFRA_ENG"
	OwnerDCOps Owner = "DC_OPS"
)
`

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["failure.go"] = owners
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestScanReadsDeclarations(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a/a.go": `package a
import "x/hostforge"
var A = hostforge.Declare(hostforge.Spec{Code: "B_CODE", Phase: "p1", Owner: hostforge.OwnerDCOps, Retryable: true, Action: "check " + "the | cable"})
var Z = hostforge.Declare(hostforge.Spec{Code: "A_CODE", Phase: "p0", Owner: hostforge.OwnerInfraEng, Retryable: false, Action: "fix"})
`,
		"a/a_test.go":        `package a; var T = hostforge.Declare(hostforge.Spec{Code: "IGNORED"})`,
		"testdata/x/x.go":    `package x; var T = hostforge.Declare(hostforge.Spec{Code: "IGNORED2"})`,
		"root_declare.go":    `package hostforge; var U = Declare(Spec{Code: "C_CODE", Phase: "any", Owner: OwnerInfraEng, Action: "a"})`,
		".hidden/hidden.go":  `package h; var T = hostforge.Declare(hostforge.Spec{Code: "IGNORED3"})`,
		"b/not_declare.go":   `package b; var T = other.Declare(1, 2)`,
		"c/other_call_ok.go": `package c; func f() { g(hostforge.Spec{}) }`,
	})
	got, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Code != "A_CODE" || got[1].Code != "B_CODE" || got[2].Code != "C_CODE" {
		t.Fatalf("Scan = %+v", got)
	}
	b := got[1]
	if b.Owner != "DC_OPS" || !b.Retryable || b.Action != "check the | cable" || b.Package != "a" || b.Phase != "p1" {
		t.Fatalf("B_CODE = %+v", b)
	}
	md := string(Render(got))
	if !strings.Contains(md, "| `B_CODE` | p1 | DC_OPS | yes | check the \\| cable | `a` |") {
		t.Fatalf("Render did not escape or format the row:\n%s", md)
	}
	out := filepath.Join(root, "out.md")
	if err := Generate(root, out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != md {
		t.Fatal("Generate wrote something else than Render")
	}
}

func TestScanRefusesUnreadableDeclarations(t *testing.T) {
	cases := map[string]string{
		"duplicate":     `package a; var A = hostforge.Declare(hostforge.Spec{Code: "X", Phase: "p", Owner: hostforge.OwnerDCOps, Action: "a"}); var B = hostforge.Declare(hostforge.Spec{Code: "X", Phase: "p", Owner: hostforge.OwnerDCOps, Action: "a"})`,
		"variable code": `package a; var A = hostforge.Declare(hostforge.Spec{Code: code, Phase: "p", Owner: hostforge.OwnerDCOps, Action: "a"})`,
		"not a literal": `package a; var A = hostforge.Declare(spec)`,
		"unkeyed":       `package a; var A = hostforge.Declare(hostforge.Spec{"X", "p"})`,
		"bad owner":     `package a; var A = hostforge.Declare(hostforge.Spec{Code: "X", Owner: someOwner(), Action: "a"})`,
		"bad retryable": `package a; var A = hostforge.Declare(hostforge.Spec{Code: "X", Retryable: yes, Action: "a"})`,
		"no code":       `package a; var A = hostforge.Declare(hostforge.Spec{Phase: "p"})`,
		"syntax error":  `package a; var A = `,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"a/a.go": src})
			if _, err := Scan(root); err == nil {
				t.Fatal("Scan accepted it")
			}
		})
	}
}

func TestScanNeedsOwners(t *testing.T) {
	if _, err := Scan(t.TempDir()); err == nil {
		t.Fatal("Scan without failure.go succeeded")
	}
}
