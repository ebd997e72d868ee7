package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
)

// The test binary doubles as the child process of the multi-process tests:
// HOSTFORGE_VAULT_CHILD selects what the child does to the vault file named
// by HOSTFORGE_VAULT_PATH.
func TestMain(m *testing.M) {
	switch os.Getenv("HOSTFORGE_VAULT_CHILD") {
	case "":
		goleak.VerifyTestMain(m)
	case "writer":
		os.Exit(childWriter())
	case "crash":
		os.Exit(childCrash())
	default:
		os.Exit(99)
	}
}

// childWriter writes HOSTFORGE_VAULT_N items named <prefix>-<i>, each
// through a fresh File (as separate CLI runs would).
func childWriter() int {
	path, prefix := os.Getenv("HOSTFORGE_VAULT_PATH"), os.Getenv("HOSTFORGE_VAULT_PREFIX")
	n, _ := strconv.Atoi(os.Getenv("HOSTFORGE_VAULT_N"))
	for i := range n {
		v, err := Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		name := fmt.Sprintf("%s-%d", prefix, i)
		if err := v.PutItem(context.Background(), name, map[string]string{"password": "pw-" + name}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// childCrash kills itself with SIGKILL after writing the temporary file
// and before renaming it over the vault.
func childCrash() int {
	v, err := Open(os.Getenv("HOSTFORGE_VAULT_PATH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testHookBeforeRename = func() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
	_ = v.PutItem(context.Background(), "bmc-admin-h1", map[string]string{"username": "root", "password": "new-rotated"})
	return 2 // not reached
}

func newVault(t *testing.T, items map[string]map[string]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vault.yaml")
	if err := Create(path, items); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestItemAndPutItem(t *testing.T) {
	ctx := context.Background()
	path := newVault(t, map[string]map[string]string{"bmc-factory": {"username": "root", "password": "calvin"}})
	v, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		item    string
		want    map[string]string
		wantErr error
	}{
		{"existing item", "bmc-factory", map[string]string{"username": "root", "password": "calvin"}, nil},
		{"missing item is not found", "bmc-admin-h1", nil, hostforge.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Item(ctx, tc.item)
			if !errors.Is(err, tc.wantErr) || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("Item(%q) = %v, %v; want %v, %v", tc.item, got, err, tc.want, tc.wantErr)
			}
		})
	}
	if err := v.PutItem(ctx, "bmc-admin-h1", map[string]string{"username": "root", "password": "p1"}); err != nil {
		t.Fatal(err)
	}
	// A returned item is a copy: changing it changes nothing.
	it, _ := v.Item(ctx, "bmc-admin-h1")
	it["password"] = "changed"
	if again, _ := v.Item(ctx, "bmc-admin-h1"); again["password"] != "p1" {
		t.Fatalf("the vault kept the caller's change: %v", again)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("after a write the file is %v, %v; want mode 0600", st.Mode(), err)
	}
	names, err := v.Names(ctx)
	if err != nil || strings.Join(names, ",") != "bmc-admin-h1,bmc-factory" {
		t.Fatalf("Names = %v, %v", names, err)
	}
	if err := v.PutItem(ctx, "", map[string]string{"x": "y"}); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("an unnamed item: %v, want ErrInvalid", err)
	}
	if err := Create(path, nil); err == nil {
		t.Fatal("Create replaced an existing vault file")
	}
}

// Another process's write is seen by a reader that opened the file before.
func TestReaderSeesOtherWriter(t *testing.T) {
	ctx := context.Background()
	path := newVault(t, nil)
	reader, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Item(ctx, "ssh-config-dhcp"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("before the write: %v", err)
	}
	writer, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.PutItem(ctx, "ssh-config-dhcp", map[string]string{"user": "deploy"}); err != nil {
		t.Fatal(err)
	}
	it, err := reader.Item(ctx, "ssh-config-dhcp")
	if err != nil || it["user"] != "deploy" {
		t.Fatalf("the reader did not see the other writer's item: %v, %v", it, err)
	}
}

// Two writers on separate File values, each holding a stale copy, keep
// each other's items: a write re-reads under the lock and merges.
func TestConcurrentInstancesLoseNothing(t *testing.T) {
	ctx := context.Background()
	path := newVault(t, map[string]map[string]string{"bmc-factory": {"password": "calvin"}})
	const writers, each = 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		v, err := Open(path) // every writer loads the file before any write
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := fmt.Sprintf("w%d-%d", w, i)
				if err := v.PutItem(ctx, name, map[string]string{"password": "pw-" + name}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	wantAll(t, path, writers, each, func(w, i int) string { return fmt.Sprintf("w%d-%d", w, i) })
}

// Two processes writing concurrently lose nothing.
func TestConcurrentProcessesLoseNothing(t *testing.T) {
	path := newVault(t, map[string]map[string]string{"bmc-factory": {"password": "calvin"}})
	const procs, each = 4, 15
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "HOSTFORGE_VAULT_CHILD=writer", "HOSTFORGE_VAULT_PATH="+path,
			"HOSTFORGE_VAULT_PREFIX="+fmt.Sprintf("p%d", p), "HOSTFORGE_VAULT_N="+strconv.Itoa(each))
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer process %d: %v\n%s", i, err, outs[i])
		}
	}
	wantAll(t, path, procs, each, func(p, i int) string { return fmt.Sprintf("p%d-%d", p, i) })
}

func wantAll(t *testing.T, path string, n, each int, name func(int, int) string) {
	t.Helper()
	v, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := v.Item(ctx, "bmc-factory"); err != nil {
		t.Errorf("the item written before the writers is gone: %v", err)
	}
	lost := 0
	for w := range n {
		for i := range each {
			it, err := v.Item(ctx, name(w, i))
			if err != nil || it["password"] != "pw-"+name(w, i) {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d items written concurrently were lost", lost, n*each)
	}
}

// A writer killed between writing its temporary file and renaming it
// leaves the old vault intact; the next write removes the leftover.
func TestCrashBeforeRenameKeepsOldFile(t *testing.T) {
	path := newVault(t, map[string]map[string]string{"bmc-admin-h1": {"username": "root", "password": "old"}})
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOSTFORGE_VAULT_CHILD=crash", "HOSTFORGE_VAULT_PATH="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the writer was not killed mid-write: %v\n%s", err, out)
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the vault changed under a crashed write:\n%s\nwant\n%s (%v)", after, before, err)
	}
	leftovers := temps(t, path)
	if len(leftovers) != 1 {
		t.Fatalf("want the crashed write's temporary file left behind, got %v", leftovers)
	}
	v, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if it, err := v.Item(context.Background(), "bmc-admin-h1"); err != nil || it["password"] != "old" {
		t.Fatalf("after the crash: %v, %v", it, err)
	}
	if err := v.PutItem(context.Background(), "bmc-admin-h2", map[string]string{"password": "x"}); err != nil {
		t.Fatal(err)
	}
	if left := temps(t, path); len(left) != 0 {
		t.Fatalf("the next write left %v", left)
	}
}

func temps(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(path), tempPrefix(path)+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRefusesExposedFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode os.FileMode
		ok   bool
	}{
		{"owner only", 0o600, true},
		{"owner read only", 0o400, true},
		{"group readable", 0o640, false},
		{"world readable", 0o604, false},
		{"group writable", 0o620, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := newVault(t, map[string]map[string]string{"a": {"password": "s3cret"}})
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path)
			if tc.ok != (err == nil) || !tc.ok && (!errors.Is(err, ErrExposed) || !strings.Contains(err.Error(), "chmod 600")) {
				t.Fatalf("Open of a %v vault: %v", tc.mode, err)
			}
			tok := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(tok, []byte("  tok-123\n"), tc.mode|0o200); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(tok, tc.mode); err != nil {
				t.Fatal(err)
			}
			s, err := ReadSecretFile(tok)
			if tc.ok != (err == nil) || tc.ok && s != "tok-123" || !tc.ok && !errors.Is(err, ErrExposed) {
				t.Fatalf("ReadSecretFile of a %v token file: %q, %v", tc.mode, s, err)
			}
		})
	}
	// A file that becomes exposed after Open is refused at the next read.
	path := newVault(t, map[string]map[string]string{"a": {"password": "s3cret"}})
	v, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Item(context.Background(), "a"); !errors.Is(err, ErrExposed) {
		t.Fatalf("Item after chmod 644: %v", err)
	}
}

func TestReadSecretFileRefusals(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"empty", empty, "is empty"},
		{"missing", filepath.Join(dir, "missing"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadSecretFile(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadSecretFile: %v, want %q", err, tc.want)
			}
		})
	}
}

// A malformed vault is refused without quoting its content.
func TestMalformedVaultNotQuoted(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"list", "- s3cret-in-a-list\n"},
		{"nested too deep", "a:\n  b:\n    c: s3cret-deep\n"},
		{"broken YAML", "a: {password: s3cret-broken\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vault.yaml")
			if err := os.WriteFile(path, []byte(tc.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path)
			if !errors.Is(err, hostforge.ErrInvalid) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("Open: %v; want ErrInvalid that quotes nothing", err)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("a missing vault: %v", err)
	}
}

// A write waiting for a held lock gives up when its context ends.
func TestPutItemHonoursContextWhileLocked(t *testing.T) {
	path := newVault(t, nil)
	unlock, err := lockFile(context.Background(), lockPath(path))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	v, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = v.PutItem(ctx, "a", map[string]string{"x": "y"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PutItem under a held lock: %v, want the context's deadline", err)
	}
	if _, err := v.Item(context.Background(), "a"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("the refused write changed the vault: %v", err)
	}
}

// FuzzOpen: any file content is refused or read, never a panic, and a
// refusal never quotes the content.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("bmc-factory: {username: root, password: calvin}\n"))
	f.Add([]byte("ssh-config-dhcp:\n  private_key: |\n    -----BEGIN OPENSSH PRIVATE KEY-----\n    b3Blbn\n    -----END OPENSSH PRIVATE KEY-----\n  known_hosts: \"[127.0.0.1]:2222 ssh-ed25519 AAAA\"\n"))
	f.Add([]byte("a: &x {p: q}\nb: *x\n"))
	f.Add([]byte("- 1\n"))
	f.Add([]byte("\x00\xff"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "vault.yaml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := Open(path)
		if err != nil {
			if len(b) >= 8 && strings.Contains(err.Error(), string(b)) {
				t.Fatalf("the error quotes the file: %v", err)
			}
			return
		}
		if _, err := v.Names(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// The vault registers the secret fields of what it hands out and stores,
// and only those.
func TestVaultRegistersSecretFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vault.yaml")
	if err := Create(path, map[string]map[string]string{"bmc-factory": {"username": "admin", "password": "factory-pw-x"}}); err != nil {
		t.Fatal(err)
	}
	v, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	v.Secrets = hostforge.NewSecrets()
	if _, err := v.Item(context.Background(), "bmc-factory"); err != nil {
		t.Fatal(err)
	}
	if err := v.PutItem(context.Background(), "bmc-admin-n1", map[string]string{"username": "admin", "pending_password": "generated-pw-y", "reset_pending": "rotation"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(v.Secrets.Values(), ","); got != "factory-pw-x,generated-pw-y" {
		t.Fatalf("registered %q", got)
	}
}
