package extensions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	named := func(name, extra string, tasks ...string) []byte {
		return []byte(strings.Replace(string(definition(stage("serverRegistered", tasks...))), `"name": "test-ext"`, `"name": "`+name+`"`+extra, 1))
	}
	write("b.json", named("bravo", "", ansibleTask("b1")))
	write("a.json", named("alpha", "", ansibleTask("a1"), webhookTask("a2", "{{ server.model }}")))
	write("draft.json", named("delta", `, "status": "draft"`, ansibleTask("d1")))
	write("dup1.json", named("twin", "", ansibleTask("t1")))
	write("dup2.json", named("twin", "", ansibleTask("t2")))
	write("broken.json", definition(stage("server Registered", ansibleTask("x"))))
	write("notes.txt", []byte("not a definition"))

	reg, bad, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range reg.Extensions() {
		names = append(names, x.Name)
	}
	if got := strings.Join(names, ","); got != "alpha,bravo,delta" {
		t.Errorf("loaded %s, want alpha,bravo,delta (by name; broken and clashing files left out)", got)
	}
	reported := map[string]string{}
	for _, fp := range bad {
		reported[filepath.Base(fp.File)] += fp.Problems[0].Message
	}
	for file, msg := range map[string]string{"broken.json": "did you mean", "dup1.json": `"twin" is also defined`, "dup2.json": `"twin" is also defined`} {
		if !strings.Contains(reported[file], msg) {
			t.Errorf("%s reported %q, want %q", file, reported[file], msg)
		}
	}
	var bound []string
	for _, b := range reg.Tasks(ServerRegisteredStage) {
		bound = append(bound, b.Extension.Name+"/"+b.Task.Label)
	}
	if got := strings.Join(bound, ","); got != "alpha/a1,alpha/a2,bravo/b1" {
		t.Errorf("serverRegistered binds %s, want the active extensions' tasks in order", got)
	}
	if _, _, err := LoadDir(filepath.Join(dir, "missing")); !RegistryUnreadable.Is(err) {
		t.Errorf("a missing directory: %v, want %s", err, RegistryUnreadable.Code)
	}
	if _, err := NewRegistry(mustParse(t, named("x", "", ansibleTask("1"))), mustParse(t, named("x", "", ansibleTask("2")))); !DefinitionInvalid.Is(err) {
		t.Errorf("two extensions named x: %v", err)
	}
}
