package cli

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// examplesDir is examples/extensions of the repository.
const examplesDir = "../../examples/extensions"

// readmeExtensionCommands are the hostforge commands of the README's
// Workflow extensions section's first shell block, each split into its
// arguments (continuation lines joined, comments dropped).
func readmeExtensionCommands(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Workflow extensions\n")
	if !ok {
		t.Fatal("the README has no Workflow extensions section")
	}
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal("the Workflow extensions section has no shell block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cmds [][]string
	var cur string
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		cont := strings.HasSuffix(line, "\\")
		cur += " " + strings.TrimSuffix(line, "\\")
		if cont {
			continue
		}
		if f := strings.Fields(cur); len(f) > 0 {
			cmds = append(cmds, f)
		}
		cur = ""
	}
	return cmds
}

// copyExamples copies examples/extensions into a directory of its own
// (the commands write state.db beside the definitions) and works there.
func copyExamples(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(examplesDir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(examplesDir, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dst)
	return dst
}

// runShellArgs runs one README command as a shell would hand it over:
// globs expanded.
func runShellArgs(t *testing.T, args []string) result {
	t.Helper()
	if args[0] != "hostforge" {
		t.Fatalf("the README's block runs %q, not hostforge", args[0])
	}
	var argv []string
	for _, a := range args[1:] {
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil || len(m) == 0 {
				t.Fatalf("%s matches nothing", a)
			}
			argv = append(argv, m...)
			continue
		}
		argv = append(argv, a)
	}
	return run(t, "", nil, argv...)
}

// The README's extension commands run as written from
// examples/extensions (the task runners replaced by ones that record what
// they are handed; the integration test runs them for real).
func TestReadmeExtensionCommandsRunAsWritten(t *testing.T) {
	cmds := readmeExtensionCommands(t)
	if len(cmds) < 5 {
		t.Fatalf("%d commands in the README's block", len(cmds))
	}
	copyExamples(t)
	fake := extensionsfake.NewRunner()
	fake.On("record-server", extensionsfake.Outcome{Result: extensions.Result{Message: "ok", Outputs: json.RawMessage(`{"stage": "serverRegistered"}`)}})
	saved := extensionRunners
	extensionRunners = func(wiring.RunnerOptions) (map[extensions.TaskType]extensions.Runner, func(), error) {
		return map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: fake, extensions.TaskSSH: fake, extensions.TaskAnsible: fake}, func() {}, nil
	}
	t.Cleanup(func() { extensionRunners = saved })
	seen := map[string]bool{}
	for _, c := range cmds {
		r := runShellArgs(t, c)
		if r.code != ExitOK {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c, " "), r.code, r.out, r.err)
		}
		seen[c[2]] = true
		if c[2] == "outputs" && !strings.Contains(r.out, `"stage": "serverRegistered"`) {
			t.Errorf("outputs after the README's fire: %s", r.out)
		}
	}
	for _, sub := range []string{"validate", "render", "fire", "history", "outputs"} {
		if !seen[sub] {
			t.Errorf("the README's block never runs extensions %s", sub)
		}
	}
	if reqs := fake.Requests(); len(reqs) != 1 || reqs[0].Task != "record-server" {
		t.Errorf("the README's fire ran %d tasks", len(reqs))
	}
}

// Every example definition validates; every stage has a payload, and
// every payload renders against every example task bound to its stage,
// with the example site's values.
func TestExamplesRenderEveryStage(t *testing.T) {
	copyExamples(t)
	defs, _ := filepath.Glob("*.json")
	if len(defs) != 3 {
		t.Fatalf("%d example definitions, want one per task type", len(defs))
	}
	types := map[extensions.TaskType]bool{}
	for _, d := range defs {
		b, _ := os.ReadFile(d)
		x, ps := extensions.Parse(b, d)
		if x == nil || len(ps) > 0 {
			t.Fatalf("%s: %v", d, ps)
		}
		for _, s := range extensions.Stages() {
			for _, task := range x.Tasks(s) {
				types[task.TaskType] = true
			}
		}
	}
	if len(types) != 3 {
		t.Errorf("the examples cover task types %v, want all three", types)
	}
	bound := 0
	for _, s := range extensions.Stages() {
		p := filepath.Join("payloads", string(s)+".json")
		r := run(t, "", nil, "extensions", "render", "--config", "site.yaml", "--stage", string(s), "--payload", p, "-o", "json")
		if r.code != ExitOK {
			t.Fatalf("render %s: exit %d: %s", s, r.code, r.err)
		}
		var rows []extensions.Rendered
		if err := json.Unmarshal([]byte(r.out), &rows); err != nil {
			t.Fatalf("render %s: %s", s, r.out)
		}
		bound += len(rows)
		if strings.Contains(r.out, "removed-before-any-task-sees-it") {
			t.Errorf("render %s printed the payload's secret", s)
		}
	}
	if bound != 8 {
		t.Errorf("%d tasks rendered over the twelve stages, want the examples' 8", bound)
	}
	r := run(t, "", nil, "extensions", "validate", "--config", "site.yaml")
	wantCode(t, r, ExitOK)
}

// The Ansible bundle is the tarball of bundles/inventory, and its sha256
// is the one the definition gives (the definition proves it by loading
// only with it).
func TestExampleBundleMatchesItsSource(t *testing.T) {
	f, err := os.Open(filepath.Join(examplesDir, "bundles", "inventory.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		files++
		got, _ := io.ReadAll(tr)
		want, err := os.ReadFile(filepath.Join(examplesDir, "bundles", h.Name))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s in the tarball differs from bundles/%s (rebuild the tarball and its sha256)", h.Name, h.Name)
		}
	}
	if files == 0 {
		t.Fatal("the tarball holds no file")
	}
}
