// Package dhcptest is the contract suite for dhcp.Remote. Every
// implementation runs it — the in-memory fake, the SSH adapter against an
// in-process SSH server and against a real OpenSSH sshd, and a user's own:
//
//	func TestContract(t *testing.T) {
//		dhcptest.Run(t, func(t *testing.T) dhcptest.Target {
//			return dhcptest.Target{Remote: myRemote(t), Dir: myScratchDir(t)}
//		})
//	}
//
// The suite runs these one-line commands through Remote.Run, which any
// POSIX shell with coreutils runs: true, false, exit N, echo, cat, ls -A,
// mkdir -p.
package dhcptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hostforge/hostforge/dhcp"
)

// Target is one Remote under test and a directory it may write.
type Target struct {
	// Remote is an open session; the suite closes it.
	Remote dhcp.Remote
	// Dir is an existing, empty, writable absolute directory on the remote.
	Dir string
}

// Run runs the contract. open is called once per subtest and must return a
// fresh Target (a new session and a new empty directory).
func Run(t *testing.T, open func(t *testing.T) Target) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := open(t)
			t.Cleanup(func() { _ = tg.Remote.Close() })
			c.run(t, tg)
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, tg Target)
}

var cases = []testCase{
	{"HashOfAbsentFileIsEmpty", func(t *testing.T, tg Target) {
		sum, err := tg.Remote.Hash(context.Background(), path.Join(tg.Dir, "absent.conf"))
		if err != nil || sum != "" {
			t.Fatalf("Hash(absent) = %q, %v; want \"\", nil", sum, err)
		}
	}},
	{"UploadThenHashAndRead", func(t *testing.T, tg Target) {
		ctx := context.Background()
		p := path.Join(tg.Dir, "node-01.conf")
		data := []byte("host node-01 {\n  hardware ethernet 0a:00:00:00:00:01;\n}\n")
		if err := tg.Remote.Upload(ctx, p, data); err != nil {
			t.Fatalf("Upload: %v", err)
		}
		mustHash(t, tg.Remote, p, data)
		mustCat(t, tg.Remote, p, data)
		mustList(t, tg.Remote, tg.Dir, "node-01.conf")
	}},
	{"UploadReplacesAndLeavesNoTemporaryFile", func(t *testing.T, tg Target) {
		ctx := context.Background()
		p := path.Join(tg.Dir, "node-02.json")
		for _, data := range [][]byte{[]byte("first, longer content\n"), []byte("second\n"), {}} {
			if err := tg.Remote.Upload(ctx, p, data); err != nil {
				t.Fatalf("Upload: %v", err)
			}
			mustHash(t, tg.Remote, p, data)
			mustCat(t, tg.Remote, p, data)
		}
		mustList(t, tg.Remote, tg.Dir, "node-02.json")
	}},
	{"UploadIntoMissingDirectoryIsATransferFailure", func(t *testing.T, tg Target) {
		p := path.Join(tg.Dir, "missing", "node.conf")
		err := tg.Remote.Upload(context.Background(), p, []byte("x\n"))
		if err == nil {
			t.Fatalf("Upload into a missing directory succeeded")
		}
		if k := dhcp.KindOf(err); k != dhcp.KindTransfer {
			t.Fatalf("Upload into a missing directory: kind %v, want transfer (%v)", k, err)
		}
	}},
	{"PathWithSpacesAndQuotes", func(t *testing.T, tg Target) {
		ctx := context.Background()
		dir := path.Join(tg.Dir, "a dir with 'quotes'")
		runExit(t, tg.Remote, "mkdir -p -- "+dhcp.ShellQuote(dir), 0)
		p := path.Join(dir, `it's "here".conf`)
		data := []byte("quoted\n")
		if err := tg.Remote.Upload(ctx, p, data); err != nil {
			t.Fatalf("Upload: %v", err)
		}
		mustHash(t, tg.Remote, p, data)
		mustCat(t, tg.Remote, p, data)
	}},
	{"RunReportsExitStatusNotError", func(t *testing.T, tg Target) {
		for _, c := range []struct {
			cmd  string
			exit int
		}{{"true", 0}, {"false", 1}, {"exit 3", 3}, {"no-such-command-hostforge", 127}} {
			runExit(t, tg.Remote, c.cmd, c.exit)
		}
		out := runExit(t, tg.Remote, "echo hello", 0)
		if string(out.Output) != "hello\n" {
			t.Fatalf("echo hello: output %q", out.Output)
		}
	}},
	{"MkdirThenUpload", func(t *testing.T, tg Target) {
		dir := path.Join(tg.Dir, "a", "b")
		runExit(t, tg.Remote, "mkdir -p -- "+dhcp.ShellQuote(dir), 0)
		runExit(t, tg.Remote, "mkdir -p -- "+dhcp.ShellQuote(dir), 0)
		p := path.Join(dir, "f.conf")
		if err := tg.Remote.Upload(context.Background(), p, []byte("f\n")); err != nil {
			t.Fatalf("Upload after mkdir: %v", err)
		}
		mustHash(t, tg.Remote, p, []byte("f\n"))
	}},
	{"ParallelUploadsOfDifferentFiles", func(t *testing.T, tg Target) {
		const n = 10
		var wg sync.WaitGroup
		errs := make([]error, n)
		want := make([]string, n)
		for i := range n {
			want[i] = fmt.Sprintf("node-%02d.conf", i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = tg.Remote.Upload(context.Background(), path.Join(tg.Dir, want[i]), payload(i))
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("parallel uploads: %v", err)
		}
		for i := range n {
			mustHash(t, tg.Remote, path.Join(tg.Dir, want[i]), payload(i))
		}
		mustList(t, tg.Remote, tg.Dir, want...)
	}},
	{"ParallelUploadsOfOneFileNeverMix", func(t *testing.T, tg Target) {
		const n = 5
		p := path.Join(tg.Dir, "shared.conf")
		var wg sync.WaitGroup
		errs := make([]error, n)
		sums := map[string]bool{}
		for i := range n {
			sums[dhcp.SHA256(payload(i))] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = tg.Remote.Upload(context.Background(), p, payload(i))
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("parallel uploads: %v", err)
		}
		sum, err := tg.Remote.Hash(context.Background(), p)
		if err != nil || !sums[sum] {
			t.Fatalf("after parallel uploads the file's hash %q (%v) is none of the uploaded contents", sum, err)
		}
		mustList(t, tg.Remote, tg.Dir, "shared.conf")
	}},
	{"CancelledContext", func(t *testing.T, tg Target) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := tg.Remote.Run(ctx, "true"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Run with a cancelled context: %v, want context.Canceled", err)
		}
		if err := tg.Remote.Upload(ctx, path.Join(tg.Dir, "x.conf"), []byte("x")); !errors.Is(err, context.Canceled) {
			t.Fatalf("Upload with a cancelled context: %v, want context.Canceled", err)
		}
		if _, err := tg.Remote.Hash(ctx, path.Join(tg.Dir, "x.conf")); !errors.Is(err, context.Canceled) {
			t.Fatalf("Hash with a cancelled context: %v, want context.Canceled", err)
		}
		// Nothing was written.
		mustList(t, tg.Remote, tg.Dir)
	}},
	{"HungCommandEndsWithItsContext", func(t *testing.T, tg Target) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := tg.Remote.Run(ctx, "sleep 600")
			done <- err
		}()
		cancel()
		if err := <-done; err == nil {
			t.Fatalf("a hung command returned no error after its context was cancelled")
		}
		// The session still works.
		runExit(t, tg.Remote, "true", 0)
	}},
}

// payload is distinct, multi-KiB content for upload i.
func payload(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("upload %d\n", i)), 500+i)
}

func runExit(t *testing.T, r dhcp.Remote, cmd string, exit int) dhcp.Output {
	t.Helper()
	out, err := r.Run(context.Background(), cmd)
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	if out.Exit != exit {
		t.Fatalf("Run(%q): exit %d, want %d (output %q)", cmd, out.Exit, exit, out.Output)
	}
	return out
}

func mustHash(t *testing.T, r dhcp.Remote, p string, data []byte) {
	t.Helper()
	sum, err := r.Hash(context.Background(), p)
	if err != nil {
		t.Fatalf("Hash(%s): %v", p, err)
	}
	if want := dhcp.SHA256(data); sum != want {
		t.Fatalf("Hash(%s) = %q, want %q", p, sum, want)
	}
}

func mustCat(t *testing.T, r dhcp.Remote, p string, data []byte) {
	t.Helper()
	out := runExit(t, r, "cat -- "+dhcp.ShellQuote(p), 0)
	if !bytes.Equal(out.Output, data) {
		t.Fatalf("cat %s = %q, want %q", p, out.Output, data)
	}
}

func mustList(t *testing.T, r dhcp.Remote, dir string, names ...string) {
	t.Helper()
	out := runExit(t, r, "ls -A -- "+dhcp.ShellQuote(dir), 0)
	got := strings.Fields(string(out.Output))
	want := append([]string(nil), names...)
	sort.Strings(got) // ls sorts by the remote's locale
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ls %s = %q, want exactly %q (no temporary files left behind)", dir, got, want)
	}
}
