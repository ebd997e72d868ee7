package ansible_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/ansible/ansibletest"
	"github.com/hostforge/hostforge/extensions"
)

// An Ansible task whose playbook writes the extension's outputs. The
// in-process fake stands in for ansible-playbook here; ansible.Exec{} runs
// the real one.
func ExampleRunner_Run() {
	dir, _ := os.MkdirTemp("", "bundle")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "site.yml"), []byte(ansibletest.Playbook), 0o644)

	r, err := ansible.New(ansible.Config{Playbooks: &ansibletest.Fake{}, CacheDir: filepath.Join(dir, ".cache"), WorkDir: dir})
	if err != nil {
		panic(err)
	}
	res, err := r.Run(context.Background(), extensions.Request{
		DeliveryID: "0d7c9d4c-0b5c-8a0e-b6e3-1b96a2cda7c2", Extension: "inventory", Task: "register", TaskType: extensions.TaskAnsible,
		Ansible:   &extensions.AnsibleOptions{Asset: "bundle", Playbook: "site.yml"},
		Assets:    []extensions.Asset{{Name: "bundle", AssetType: "AnsibleBundle", URL: dir}},
		Variables: json.RawMessage(`{"server": {"serialNumber": "6SBT0R3", "model": "PowerEdge R450", "ramGbytes": 32}, "configVars": {"zone": "dc1"}}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Outputs))
	// Output:
	// {"serial":"6SBT0R3","ram":32,"delivery":"0d7c9d4c-0b5c-8a0e-b6e3-1b96a2cda7c2"}
}
