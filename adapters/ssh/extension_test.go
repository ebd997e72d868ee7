package ssh_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/extensions"
)

const taskPassword = "correct-horse-battery"

// taskFixture is an in-process server accepting a key and a password, and
// the site's known_hosts trusting it.
type taskFixture struct {
	srv        *sshtest.Server
	client     sshtest.Key
	knownHosts string
	vault      memVault
}

func newTaskFixture(t *testing.T) *taskFixture {
	t.Helper()
	client := sshtest.NewKey(t)
	srv := sshtest.Start(t, client.PublicKey(), sshtest.AcceptPassword(taskPassword))
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(srv.KnownHosts(srv.HostKey.PublicKey())), 0o644); err != nil {
		t.Fatal(err)
	}
	return &taskFixture{srv: srv, client: client, knownHosts: kh, vault: memVault{
		"ext-ssh-key": {ssh.FieldPrivateKey: client.PEM, ssh.FieldUser: "deploy"},
	}}
}

func (f *taskFixture) request(command string, o extensions.SSHOptions) extensions.Request {
	host, port, _ := net.SplitHostPort(f.srv.Addr)
	o.Host = host
	o.Port, _ = strconv.Atoi(port)
	o.CommandTemplate = "(rendered)"
	return extensions.Request{
		DeliveryID: extensions.DeliveryID("evt", "ops", "run"), Extension: "ops", Task: "run", TaskType: extensions.TaskSSH,
		SSH: &o, Body: command,
	}
}

func (f *taskFixture) runner() *ssh.ExtensionRunner {
	return &ssh.ExtensionRunner{KnownHosts: f.knownHosts, Vault: f.vault}
}

func TestExtensionRunnerRunsTheRenderedCommand(t *testing.T) {
	f := newTaskFixture(t)
	tests := []struct {
		name string
		o    extensions.SSHOptions
		user string
	}{
		{"private key from the vault", extensions.SSHOptions{PrivateKeySecret: "ext-ssh-key", Timeout: 10}, "deploy"},
		{"password", extensions.SSHOptions{Username: "operator", Password: taskPassword, Timeout: 10}, "operator"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.srv.Commands())
			res, err := f.runner().Run(context.Background(), f.request("echo registered 6SBT0R3; echo note >&2", tc.o))
			if err != nil {
				t.Fatal(err)
			}
			cmds := f.srv.Commands()
			if len(cmds) != before+1 || cmds[len(cmds)-1] != "echo registered 6SBT0R3; echo note >&2" {
				t.Fatalf("the server ran %q, want the rendered command once", cmds[before:])
			}
			for _, want := range []string{"exit 0 on " + f.srv.Addr + " as " + tc.user, "registered 6SBT0R3", "note", "command: echo registered"} {
				if !strings.Contains(res.Message, want) {
					t.Errorf("message %q lacks %q", res.Message, want)
				}
			}
		})
	}
}

func TestExtensionRunnerFailures(t *testing.T) {
	f := newTaskFixture(t)
	other := sshtest.NewKey(t)
	changed := filepath.Join(t.TempDir(), "changed")
	_ = os.WriteFile(changed, []byte(f.srv.KnownHosts(other.PublicKey())), 0o644)
	unrelated := filepath.Join(t.TempDir(), "unrelated")
	_ = os.WriteFile(unrelated, []byte("[10.9.9.9]:22 "+strings.TrimSpace(string(other.AuthorizedKey()))+"\n"), 0o644)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := ln.Addr().(*net.TCPAddr)
	ln.Close()

	key := extensions.SSHOptions{PrivateKeySecret: "ext-ssh-key", Timeout: 10}
	tests := []struct {
		name       string
		knownHosts string
		o          extensions.SSHOptions
		command    string
		addr       *net.TCPAddr
		code       string
		msg        string
		runs       bool
	}{
		{"changed host key", changed, key, "true", nil, ssh.SSHHostKey.Code, "host key changed", false},
		{"host not in known_hosts", unrelated, key, "true", nil, ssh.SSHHostKey.Code, "no entry", false},
		{"no known_hosts configured", "", key, "true", nil, extensions.RunnerConfigInvalid.Code, "extensions.known_hosts", false},
		{"unreadable known_hosts", filepath.Join(t.TempDir(), "missing"), key, "true", nil, extensions.RunnerConfigInvalid.Code, "cannot be read", false},
		{"wrong password", f.knownHosts, extensions.SSHOptions{Username: "operator", Password: "wrong-password", Timeout: 10}, "true", nil, ssh.SSHAuth.Code, "refused the login of operator", false},
		{"no credential", f.knownHosts, extensions.SSHOptions{Username: "operator", Timeout: 10}, "true", nil, extensions.SecretUnavailable.Code, "no credential", false},
		{"no user", f.knownHosts, extensions.SSHOptions{Password: taskPassword, Timeout: 10}, "true", nil, extensions.SecretUnavailable.Code, "no login user", false},
		{"missing key item", f.knownHosts, extensions.SSHOptions{PrivateKeySecret: "nope", Username: "x", Timeout: 10}, "true", nil, extensions.SecretUnavailable.Code, "no item nope", false},
		{"non-zero exit", f.knownHosts, key, "echo disk full >&2; exit 3", nil, ssh.SSHCommandFailed.Code, "exit 3 on", true},
		{"connection refused", f.knownHosts, key, "true", closedAddr, ssh.SSHUnreachable.Code, "connection refused", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.srv.Commands())
			req := f.request(tc.command, tc.o)
			if tc.addr != nil {
				req.SSH.Host, req.SSH.Port = tc.addr.IP.String(), tc.addr.Port
			}
			r := f.runner()
			r.KnownHosts = tc.knownHosts
			_, err := r.Run(context.Background(), req)
			if hostforge.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want %s saying %q", err, tc.code, tc.msg)
			}
			if ran := len(f.srv.Commands()) > before; ran != tc.runs {
				t.Errorf("command ran: %v, want %v", ran, tc.runs)
			}
		})
	}
}

func TestExtensionRunnerTimeout(t *testing.T) {
	f := newTaskFixture(t)
	begin := time.Now()
	_, err := f.runner().Run(context.Background(), f.request("echo started; sleep 30", extensions.SSHOptions{PrivateKeySecret: "ext-ssh-key", Timeout: 1}))
	if !extensions.TaskTimeout.Is(err) || !strings.Contains(err.Error(), "did not end within its timeout of 1s") {
		t.Fatalf("error %v", err)
	}
	// The output is the record's detail, not the error's text.
	if f, _ := hostforge.AsFailure(err); strings.Contains(err.Error(), "started") || !strings.Contains(f.Detail, "output: started") {
		t.Fatalf("error %v, detail %q", err, f.Detail)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("took %s: the command must be killed at its timeout", d)
	}

	req := f.request("sleep 30", extensions.SSHOptions{PrivateKeySecret: "ext-ssh-key", Timeout: 60})
	req.Deadline = time.Now().Add(500 * time.Millisecond)
	if _, err := f.runner().Run(context.Background(), req); !extensions.TaskTimeout.Is(err) || !strings.Contains(err.Error(), "stage deadline") {
		t.Fatalf("stage deadline: %v", err)
	}
}

func TestExtensionRunnerCapsOutputAndScrubsSecrets(t *testing.T) {
	f := newTaskFixture(t)
	o := extensions.SSHOptions{Username: "operator", Password: taskPassword, Timeout: 10}
	res, err := f.runner().Run(context.Background(), f.request("head -c 100000 /dev/zero | tr '\\0' x; echo; echo pw="+taskPassword, o))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Message, taskPassword) {
		t.Errorf("the password reached the record: %.200s", res.Message)
	}
	if !strings.Contains(res.Message, "pw=[redacted]") || !strings.Contains(res.Message, "of "+strconv.Itoa(100000+1+len("pw="+taskPassword+"\n"))+" bytes") || len(res.Message) > 3*ssh.MaxTaskOutput {
		t.Errorf("message of %d bytes: want the capped tail, scrubbed: ...%s", len(res.Message), res.Message[max(0, len(res.Message)-120):])
	}

	// A task that receives secrets keeps its command and its output only
	// by SHA-256 and length, whether it succeeds or fails; the failure's
	// text carries neither.
	for _, exit := range []string{"0", "3"} {
		req := f.request("echo Sekrit-From-Payload; echo SEKRIT-FROM-PAYLOAD >&2; exit "+exit, o)
		req.IncludesSecrets = true
		res, err = f.runner().Run(context.Background(), req)
		text := res.Message
		if exit != "0" {
			fl, ok := hostforge.AsFailure(err)
			if !ok || !ssh.SSHCommandFailed.Is(err) || strings.Contains(strings.ToLower(err.Error()), "sekrit") {
				t.Fatalf("exit %s: %v", exit, err)
			}
			text = fl.Detail
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(text), "sekrit") || !strings.Contains(text, "command: "+extensions.Digest([]byte(req.Body))) ||
			!strings.Contains(text, "output: sha256:") || !strings.Contains(text, ", 40 bytes") {
			t.Errorf("exit %s: a task that receives secrets must keep its command and output by digest: %s", exit, text)
		}
	}
}
