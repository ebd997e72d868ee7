//go:build integration

package ssh_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/extensions"
)

// An extension's SSH task on the real OpenSSH sshd: the rendered command
// runs as the task's user with the key of its privateKeySecret, its effect
// and output are there, a non-zero exit fails, and a host key the site's
// known_hosts does not list is refused before anything runs.
func TestIntegrationExtensionTaskOnRealSSHD(t *testing.T) {
	r := needSSHD(t)
	host, p, _ := net.SplitHostPort(r.addr)
	port, _ := strconv.Atoi(p)
	vault := memVault{"ext-ssh": {ssh.FieldPrivateKey: r.key}}
	runner := &ssh.ExtensionRunner{KnownHosts: os.Getenv("HOSTFORGE_SSHD_KNOWN_HOSTS"), Vault: vault}
	marker := filepath.Join(r.dir, "registered-"+strconv.Itoa(os.Getpid()))
	t.Cleanup(func() { _ = os.Remove(marker) })

	// The command as the dispatcher renders it from a definition.
	x, ps := extensions.Parse([]byte(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "ops", "label": "ops", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [{"label": "announce", "taskType": "ExtensionTaskSsh",
   "options": {"host": "`+host+`", "port": `+p+`, "username": "`+r.user+`", "privateKeySecret": "ext-ssh", "timeout": 30,
     "commandTemplate": "printf '%s\\n' {{ server.serialNumber | shellquote }} > {{ marker | shellquote }} && echo done for {{ server.model | shellquote }}"}}]}]}`), "ops.json")
	if x == nil {
		t.Fatal(ps)
	}
	rendered, err := x.Render(t.Context(), extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "6SBT0R3", "model": "Power Edge; R450"}, "marker": "`+marker+`"}`), extensions.RenderOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	var command string
	if err := json.Unmarshal(rendered[0].Rendered, &command); err != nil {
		t.Fatal(err)
	}
	so := &extensions.SSHOptions{Host: host, Port: port, Username: r.user, PrivateKeySecret: "ext-ssh", Timeout: 30}
	res, err := runner.Run(context.Background(), extensions.Request{Extension: "ops", Task: "announce", TaskType: extensions.TaskSSH, SSH: so, Body: command})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "6SBT0R3\n" {
		t.Errorf("the command's effect: %q, %v", b, err)
	}
	if !strings.Contains(res.Message, "exit 0 on "+r.addr+" as "+r.user) || !strings.Contains(res.Message, "done for Power Edge; R450") {
		t.Errorf("message %q", res.Message)
	}

	_, err = runner.Run(context.Background(), extensions.Request{Extension: "ops", Task: "fail", TaskType: extensions.TaskSSH, SSH: so, Body: "echo no space left >&2; exit 28"})
	// The output is the failure's detail, kept for the record and left
	// out of its text.
	if f, ok := hostforge.AsFailure(err); !ok || !ssh.SSHCommandFailed.Is(err) || !strings.Contains(err.Error(), "exit 28") || !strings.Contains(f.Detail, "no space left") {
		t.Errorf("non-zero exit: %v", err)
	}

	other := sshtest.NewKey(t)
	kh := filepath.Join(t.TempDir(), "known_hosts")
	_ = os.WriteFile(kh, []byte("["+host+"]:"+p+" "+strings.TrimSpace(string(other.AuthorizedKey()))+"\n"), 0o644)
	bad := &ssh.ExtensionRunner{KnownHosts: kh, Vault: vault}
	_, err = bad.Run(context.Background(), extensions.Request{Extension: "ops", Task: "announce", TaskType: extensions.TaskSSH, SSH: so, Body: "touch " + marker + ".never"})
	if !ssh.SSHHostKey.Is(err) {
		t.Errorf("changed host key: %v", err)
	}
	if _, err := os.Stat(marker + ".never"); err == nil {
		t.Error("a command ran on a host whose key is not trusted")
	}
}
