//go:build integration

package nunjucks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvNodePath names the node_modules directory holding Nunjucks 3.2.4
// (scripts/integration.d/nunjucks.sh installs it).
const EnvNodePath = "HOSTFORGE_NUNJUCKS_NODE_PATH"

func nunjucksScript(t *testing.T) (node, nodePath string) {
	t.Helper()
	nodePath = os.Getenv(EnvNodePath)
	if nodePath == "" {
		if os.Getenv("HOSTFORGE_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("%s is not set, and HOSTFORGE_REQUIRE_INTEGRATION=1: the corpus must be checked against real Nunjucks", EnvNodePath)
		}
		t.Skipf("%s is not set: no Nunjucks to compare with", EnvNodePath)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	return node, nodePath
}

func runGolden(t *testing.T, node, nodePath, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command(node, filepath.Join(corpus, "nunjucks-golden.js"), dir)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGoldenCorpusAgainstNunjucks renders every golden template with real
// Nunjucks 3.2.4: together with TestGoldenCorpus (the Go renderer against
// the same recorded outputs) it shows the two agree on every case.
func TestGoldenCorpusAgainstNunjucks(t *testing.T) {
	node, nodePath := nunjucksScript(t)
	out, err := runGolden(t, node, nodePath, corpus)
	t.Log(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("real Nunjucks disagrees with the golden corpus: %v\n%s", err, out)
	}
	if !strings.Contains(out, "nunjucks 3.2.4:") {
		t.Fatalf("unexpected output from the check:\n%s", out)
	}
}

// TestGoldenCheckFailsOnADifference makes sure the comparison can fail: a
// copy of the corpus with one recorded output changed must be refused.
func TestGoldenCheckFailsOnADifference(t *testing.T) {
	node, nodePath := nunjucksScript(t)
	dir := t.TempDir()
	for _, sub := range []string{"templates", "payloads"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(corpus, sub, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(f) == "small--booleans-print-true-false.out" {
				b = []byte(strings.Replace(string(b), "true", "True", 1)) // what Jinja would print
			}
			if err := os.WriteFile(filepath.Join(dir, sub, filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := runGolden(t, node, nodePath, dir)
	if err == nil || !strings.Contains(out, "FAIL small--booleans-print-true-false") {
		t.Fatalf("the check accepted a changed output (err %v):\n%s", err, out)
	}
}
