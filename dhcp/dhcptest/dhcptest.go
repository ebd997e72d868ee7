// Package dhcptest is the contract suite for dhcp.Remote. Every
// implementation runs it — the in-memory fake, the SSH adapter against an
// in-process SSH server and against a real OpenSSH sshd, and a user's own:
//
//	func TestContract(t *testing.T) {
//		dhcptest.Run(t, func(t *testing.T) dhcptest.Target {
//			r := myRemote(t)
//			return dhcptest.Target{
//				Remote:  r,
//				Dir:     myScratchDir(t),
//				Dialer:  myDialer,
//				Service: dhcptest.ShellService(t, r, myOtherScratchDir(t)),
//			}
//		})
//	}
//
// The suite checks each Remote method on its own, then runs dhcp.Phase
// through the Target's Dialer against a DHCP service on the server: a change
// is loaded; a change the config test refuses restores the host's previous
// file and leaves the service running on it; a restart that fails restores
// the previous file and restarts the service on it; a change cut off after
// its file went live is completed by the rerun, not mistaken for a converged
// one; two workers (two Phases, as in two processes) take turns through
// the server's lock; and a reservation's removal (a host's retirement) is
// unloaded, rolled back and completed the same way.
//
// The suite runs these one-line commands through Remote.Run, which any
// POSIX shell with coreutils runs: true, false, exit N, echo, cat, ls -A,
// mkdir -p, sleep.
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
	"time"

	"github.com/hostforge/hostforge/dhcp"
)

// Target is one Remote under test, a directory it may write, a way to open
// more sessions to the same server, and a DHCP service on that server.
type Target struct {
	// Remote is an open session; the suite closes it.
	Remote dhcp.Remote
	// Dir is an existing, empty, writable absolute directory on the remote.
	Dir string
	// Dialer opens further sessions to the same server. Each stands for
	// another worker: the suite runs dhcp.Phase through it, and two Phases
	// through it for two workers.
	Dialer dhcp.Dialer
	// Service is a DHCP service on the same server (see Service).
	Service Service
}

// Service is a DHCP service the suite drives through dhcp.Phase. Its
// behaviour is the contract's, whatever runs it:
//
//   - Config is ISC-flavoured, and Config.Dir an existing, empty directory
//     of host files ("*.conf") distinct from Target.Dir.
//   - The config test exits non-zero when a non-empty host file is not an
//     ISC host declaration with "hardware ethernet" and "fixed-address", or
//     when two host files reserve the same fixed-address.
//   - A restart stops the service and fails (the service stays down) while
//     restarts are set to fail or the config test fails; otherwise the
//     service loads every host file and runs.
//   - The status command exits 0 when the service runs.
//   - The service runs, with no host file loaded, when the Target is opened.
//   - A config test or restart takes at least 20 ms, and one that starts
//     while another runs counts as an overlap.
//
// ShellService is one for any server whose Run is a POSIX shell; the fake
// DHCP server models the same behaviour in memory.
type Service struct {
	Config dhcp.Config
	// FailRestarts makes the next n restarts fail.
	FailRestarts func(t *testing.T, n int)
	// State reports the service's state.
	State func(t *testing.T) ServiceState
}

// ServiceState is what the service runs on.
type ServiceState struct {
	Running  bool
	Restarts int
	// Overlaps counts config tests and restarts that started while another
	// was running.
	Overlaps int
	// Loaded maps each host file the running service loaded, by base name,
	// to the SHA-256 of the content it loaded.
	Loaded map[string]string
}

// Run runs the contract. open is called once per subtest and must return a
// fresh Target (a new session, a new empty directory, a fresh service).
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
		sums, err := tg.Remote.Hash(context.Background(), path.Join(tg.Dir, "absent.conf"))
		if err != nil || len(sums) != 1 || sums[0] != "" {
			t.Fatalf("Hash(absent) = %q, %v; want [\"\"], nil", sums, err)
		}
	}},
	{"HashOfSeveralFilesInOrder", func(t *testing.T, tg Target) {
		ctx := context.Background()
		a, b := path.Join(tg.Dir, "a.conf"), path.Join(tg.Dir, "b.conf")
		for _, f := range []struct {
			p    string
			data []byte
		}{{a, []byte("a\n")}, {b, payload(1)}} {
			if err := tg.Remote.Upload(ctx, f.p, f.data); err != nil {
				t.Fatalf("Upload: %v", err)
			}
		}
		sums, err := tg.Remote.Hash(ctx, a, path.Join(tg.Dir, "absent.conf"), b)
		want := []string{dhcp.SHA256([]byte("a\n")), "", dhcp.SHA256(payload(1))}
		if err != nil || strings.Join(sums, ",") != strings.Join(want, ",") {
			t.Fatalf("Hash(a, absent, b) = %q, %v; want %q", sums, err, want)
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
		mustRead(t, tg.Remote, p, data)
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
	{"ReadAndRemove", func(t *testing.T, tg Target) {
		ctx := context.Background()
		p := path.Join(tg.Dir, "node-03.conf")
		if b, ok, err := tg.Remote.Read(ctx, p); err != nil || ok || b != nil {
			t.Fatalf("Read(absent) = %q, %v, %v; want nil, false, nil", b, ok, err)
		}
		if err := tg.Remote.Remove(ctx, p); err != nil {
			t.Fatalf("Remove(absent) = %v, want nil", err)
		}
		if err := tg.Remote.Upload(ctx, p, payload(3)); err != nil {
			t.Fatalf("Upload: %v", err)
		}
		mustRead(t, tg.Remote, p, payload(3))
		if err := tg.Remote.Remove(ctx, p); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		if _, ok, err := tg.Remote.Read(ctx, p); err != nil || ok {
			t.Fatalf("Read after Remove = %v, %v; want absent", ok, err)
		}
		mustList(t, tg.Remote, tg.Dir)
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
		unlock, err := tg.Remote.Lock(ctx, dir)
		if err != nil {
			t.Fatalf("Lock(%q): %v", dir, err)
		}
		if err := unlock(); err != nil {
			t.Fatalf("unlock: %v", err)
		}
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
		if err != nil || len(sum) != 1 || !sums[sum[0]] {
			t.Fatalf("after parallel uploads the file's hash %q (%v) is none of the uploaded contents", sum, err)
		}
		mustList(t, tg.Remote, tg.Dir, "shared.conf")
	}},
	{"LockExcludesOtherSessionsUntilReleased", func(t *testing.T, tg Target) {
		other := dial(t, tg)
		unlock := mustLock(t, tg.Remote, tg.Dir)
		// A second worker waits while the lock is held, until its context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if u, err := other.Lock(ctx, tg.Dir); !errors.Is(err, context.DeadlineExceeded) {
			if u != nil {
				_ = u()
			}
			t.Fatalf("Lock while another session holds it: %v, want the context's deadline", err)
		}
		if err := unlock(); err != nil {
			t.Fatalf("unlock: %v", err)
		}
		// Released: the second worker takes it. (An implementation may
		// close a session whose lock wait it could not abort otherwise, so
		// the worker reconnects.)
		unlock2 := mustLock(t, dial(t, tg), tg.Dir)
		if err := unlock2(); err != nil {
			t.Fatalf("unlock: %v", err)
		}
		// A file lock path is created in its directory.
		file := path.Join(tg.Dir, "restart.lock")
		u := mustLock(t, tg.Remote, file)
		if err := u(); err != nil {
			t.Fatalf("unlock: %v", err)
		}
		mustList(t, tg.Remote, tg.Dir, "restart.lock")
	}},
	{"LockIsReleasedWhenItsSessionEnds", func(t *testing.T, tg Target) {
		holder := dial(t, tg)
		mustLock(t, holder, tg.Dir)
		// The holder's worker dies without unlocking.
		if err := holder.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		u := mustLock(t, tg.Remote, tg.Dir)
		if err := u(); err != nil {
			t.Fatalf("unlock: %v", err)
		}
	}},
	{"LockInMissingDirectoryIsALockFailure", func(t *testing.T, tg Target) {
		u, err := tg.Remote.Lock(context.Background(), path.Join(tg.Dir, "missing", "lock"))
		if err == nil {
			_ = u()
			t.Fatalf("Lock in a missing directory succeeded")
		}
		if k := dhcp.KindOf(err); k != dhcp.KindLock {
			t.Fatalf("Lock in a missing directory: kind %v, want lock (%v)", k, err)
		}
	}},
	{"CancelledContext", func(t *testing.T, tg Target) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		p := path.Join(tg.Dir, "x.conf")
		if _, err := tg.Remote.Run(ctx, "true"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Run with a cancelled context: %v, want context.Canceled", err)
		}
		if err := tg.Remote.Upload(ctx, p, []byte("x")); !errors.Is(err, context.Canceled) {
			t.Fatalf("Upload with a cancelled context: %v, want context.Canceled", err)
		}
		if _, err := tg.Remote.Hash(ctx, p); !errors.Is(err, context.Canceled) {
			t.Fatalf("Hash with a cancelled context: %v, want context.Canceled", err)
		}
		if _, _, err := tg.Remote.Read(ctx, p); !errors.Is(err, context.Canceled) {
			t.Fatalf("Read with a cancelled context: %v, want context.Canceled", err)
		}
		if err := tg.Remote.Remove(ctx, p); !errors.Is(err, context.Canceled) {
			t.Fatalf("Remove with a cancelled context: %v, want context.Canceled", err)
		}
		if _, err := tg.Remote.Lock(ctx, tg.Dir); !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock with a cancelled context: %v, want context.Canceled", err)
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
		time.Sleep(200 * time.Millisecond) // let the command start
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("a hung command ended with %v after its context was cancelled, want context.Canceled", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("a hung command did not end with its context")
		}
		// The session still works, or — when the server would not let the
		// command be stopped — refuses further work at once; it never hangs.
		wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer wcancel()
		out, err := tg.Remote.Run(wctx, "true")
		if err != nil && dhcp.KindOf(err) != dhcp.KindTransport || err == nil && out.Exit != 0 {
			t.Fatalf("Run after an aborted command: %+v, %v; want it to work or to fail as a transport failure", out, err)
		}
		// A new session works either way.
		runExit(t, dial(t, tg), "true", 0)
	}},

	// The phase through this Remote: rollback and the server's lock.

	{"PhaseChangeIsLoaded", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		res := mustConfigure(t, p, hostA, true)
		st := tg.Service.State(t)
		if !st.Running || st.Loaded[path.Base(res.Path)] != res.SHA256 || st.Restarts != 1 {
			t.Fatalf("after a change the service state is %+v, want it running on %s (%s) after 1 restart", st, path.Base(res.Path), res.SHA256)
		}
		mustList(t, tg.Remote, tg.Service.Config.Dir, path.Base(res.Path))
		mustConfigure(t, p, hostA, false)
		if st := tg.Service.State(t); st.Restarts != 1 {
			t.Fatalf("an unchanged rerun restarted the service: %+v", st)
		}
	}},
	{"PhaseRefusedChangeRestoresThePreviousFile", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		before := mustConfigure(t, p, hostA, true)
		mustConfigure(t, p, hostB, true)
		clash := hostA
		clash.IP = hostB.IP // the config test refuses an address reserved twice
		refused(t, tg, p, before, clash)
		// Once B moves, A's change goes through.
		movedB := hostB
		movedB.IP = "10.20.0.3"
		mustConfigure(t, p, movedB, true)
		res := mustConfigure(t, p, clash, true)
		if st := tg.Service.State(t); !st.Running || st.Loaded[path.Base(res.Path)] != res.SHA256 {
			t.Fatalf("the rerun after the fix did not load the change: %+v", st)
		}
	}},
	{"PhaseValidFileIsNeverMovedAsideForAnotherHostsFile", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		before := mustConfigure(t, p, hostA, true)
		broken := path.Join(tg.Service.Config.Dir, "broken.conf")
		if err := tg.Remote.Upload(context.Background(), broken, []byte("host broken {\n")); err != nil {
			t.Fatal(err)
		}
		moved := hostA
		moved.IP = "10.20.0.77"
		refused(t, tg, p, before, moved)
		mustList(t, tg.Remote, tg.Service.Config.Dir, path.Base(before.Path), "broken.conf")
		if err := tg.Remote.Remove(context.Background(), broken); err != nil {
			t.Fatal(err)
		}
		res := mustConfigure(t, p, moved, true)
		if st := tg.Service.State(t); !st.Running || st.Loaded[path.Base(res.Path)] != res.SHA256 {
			t.Fatalf("the rerun after the fix did not load the change: %+v", st)
		}
	}},
	{"PhaseRefusedNewHostLeavesNoFile", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		b := mustConfigure(t, p, hostB, true)
		clash := dhcp.Entry{Hostname: "contract-c", MAC: "0a:00:00:00:0c:03", IP: hostB.IP}
		if _, err := p.Configure(context.Background(), clash); !dhcp.ConfigRejected.Is(err) {
			t.Fatalf("Configure: %v, want DHCP_CONFIG_REJECTED", err)
		}
		mustList(t, tg.Remote, tg.Service.Config.Dir, path.Base(b.Path))
		if st := tg.Service.State(t); !st.Running || len(st.Loaded) != 1 {
			t.Fatalf("service state %+v, want it running on %s only", st, path.Base(b.Path))
		}
	}},
	{"PhaseFailedRestartRestoresAndRestartsOnTheBackup", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		before := mustConfigure(t, p, hostA, true)
		tg.Service.FailRestarts(t, 1)
		moved := hostA
		moved.IP = "10.20.0.88"
		_, err := p.Configure(context.Background(), moved)
		if !dhcp.RestartFailed.Is(err) {
			t.Fatalf("Configure: %v, want DHCP_RESTART_FAILED", err)
		}
		if !strings.Contains(err.Error(), "restarted the service on it: the service is running") {
			t.Fatalf("the failure %q does not say that the service was restarted on the previous file", err)
		}
		mustHashSum(t, tg.Remote, before.Path, before.SHA256)
		st := tg.Service.State(t)
		if !st.Running || st.Loaded[path.Base(before.Path)] != before.SHA256 {
			t.Fatalf("after a failed restart the service state is %+v, want it running on the previous file", st)
		}
		assertNoLeftovers(t, tg, tg.Service.Config.Dir)
		res := mustConfigure(t, p, moved, true)
		if st := tg.Service.State(t); st.Loaded[path.Base(res.Path)] != res.SHA256 {
			t.Fatalf("the rerun did not load the change: %+v", st)
		}
	}},
	{"PhaseChangeCutOffAfterItsFileWentLiveIsCompletedByTheRerun", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		before := mustConfigure(t, p, hostA, true)
		moved := hostA
		moved.IP = "10.20.0.99"
		want, file, err := dhcp.Render(dhcp.ISC, tg.Service.Config.Dir, moved)
		if err != nil {
			t.Fatal(err)
		}
		cut := dhcp.New(cutOff{d: tg.Dialer, file: file}, tg.Service.Config, nil)
		if _, err := cut.Configure(context.Background(), moved); !dhcp.Transport.Is(err) {
			t.Fatalf("Configure with the connection cut after the upload: %v, want DHCP_SSH_TRANSPORT", err)
		}
		// The new file is live and its hash matches, but the service never
		// tested nor loaded it: the rerun must not take it for converged.
		mustHashSum(t, tg.Remote, file, dhcp.SHA256(want))
		if st := tg.Service.State(t); st.Loaded[path.Base(file)] != before.SHA256 {
			t.Fatalf("the cut-off change was loaded: %+v", st)
		}
		res := mustConfigure(t, p, moved, true)
		if st := tg.Service.State(t); !st.Running || st.Loaded[path.Base(file)] != res.SHA256 {
			t.Fatalf("the rerun did not load the change: %+v", st)
		}
		assertNoLeftovers(t, tg, tg.Service.Config.Dir)
	}},
	{"PhaseCutOffChangeThatIsRefusedRestoresTheLastAcceptedFile", func(t *testing.T, tg Target) {
		p := newPhase(t, tg)
		before := mustConfigure(t, p, hostA, true)
		mustConfigure(t, p, hostB, true)
		clash := hostA
		clash.IP = hostB.IP
		_, file, _ := dhcp.Render(dhcp.ISC, tg.Service.Config.Dir, clash)
		cut := dhcp.New(cutOff{d: tg.Dialer, file: file}, tg.Service.Config, nil)
		if _, err := cut.Configure(context.Background(), clash); !dhcp.Transport.Is(err) {
			t.Fatalf("Configure with the connection cut after the upload: %v, want DHCP_SSH_TRANSPORT", err)
		}
		// The rerun's test refuses the change: the backup the cut-off run
		// made — the file the service accepted — comes back.
		if _, err := p.Configure(context.Background(), clash); !dhcp.ConfigRejected.Is(err) {
			t.Fatalf("rerun: %v, want DHCP_CONFIG_REJECTED", err)
		}
		mustHashSum(t, tg.Remote, file, before.SHA256)
		if st := tg.Service.State(t); !st.Running || st.Loaded[path.Base(file)] != before.SHA256 {
			t.Fatalf("service state %+v, want it running on the last accepted file", st)
		}
		assertNoLeftovers(t, tg, tg.Service.Config.Dir)
	}},
	{"PhaseTwoWorkersTakeTurns", func(t *testing.T, tg Target) {
		const perWorker = 3
		workers := []*dhcp.Phase{newPhase(t, tg), newPhase(t, tg)}
		var entries []dhcp.Entry
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		start := make(chan struct{})
		for w, p := range workers {
			for i := range perWorker {
				e := dhcp.Entry{Hostname: fmt.Sprintf("worker%d-node%d", w, i), MAC: fmt.Sprintf("0a:00:00:00:%02x:%02x", w+1, i+1), IP: fmt.Sprintf("10.21.%d.%d", w, i+1)}
				entries = append(entries, e)
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, err := p.Configure(context.Background(), e)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}()
			}
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("two workers: %v", err)
		}
		st := tg.Service.State(t)
		if st.Overlaps != 0 {
			t.Fatalf("%d config tests or restarts of the two workers overlapped; the server's lock must serialise them", st.Overlaps)
		}
		var names []string
		for _, e := range entries {
			data, file, _ := dhcp.Render(dhcp.ISC, tg.Service.Config.Dir, e)
			names = append(names, path.Base(file))
			if got := st.Loaded[path.Base(file)]; got != dhcp.SHA256(data) {
				t.Fatalf("the service loaded %s as %q, want %q (state %+v)", file, got, dhcp.SHA256(data), st)
			}
		}
		if !st.Running || st.Restarts != len(entries) {
			t.Fatalf("service state %+v, want it running after %d restarts", st, len(entries))
		}
		mustList(t, tg.Remote, tg.Service.Config.Dir, names...)
	}},
}

// Hosts the phase cases configure.
var (
	hostA = dhcp.Entry{Hostname: "contract-a", MAC: "0a:00:00:00:0c:01", IP: "10.20.0.1"}
	hostB = dhcp.Entry{Hostname: "contract-b", MAC: "0a:00:00:00:0c:02", IP: "10.20.0.2"}
)

// refused configures change, which the service's config test refuses, and
// checks that the host's previous file (before) is back in place, not moved
// aside, and that the service still runs on it without a restart.
func refused(t *testing.T, tg Target, p *dhcp.Phase, before dhcp.Result, change dhcp.Entry) {
	t.Helper()
	restarts := tg.Service.State(t).Restarts
	_, err := p.Configure(context.Background(), change)
	if !dhcp.ConfigRejected.Is(err) {
		t.Fatalf("Configure: %v, want DHCP_CONFIG_REJECTED", err)
	}
	if !strings.Contains(err.Error(), "restored the host's previous file") {
		t.Fatalf("the failure %q does not say that the previous file was restored", err)
	}
	mustHashSum(t, tg.Remote, before.Path, before.SHA256)
	st := tg.Service.State(t)
	if !st.Running || st.Loaded[path.Base(before.Path)] != before.SHA256 || st.Restarts != restarts {
		t.Fatalf("after a refused change the service state is %+v, want it still running on the previous file without a restart", st)
	}
	assertNoLeftovers(t, tg, tg.Service.Config.Dir)
}

func newPhase(t *testing.T, tg Target) *dhcp.Phase {
	t.Helper()
	if tg.Dialer == nil || tg.Service.State == nil || tg.Service.FailRestarts == nil {
		t.Fatal("dhcptest: Target.Dialer and Target.Service (Config, FailRestarts, State) are required")
	}
	return dhcp.New(tg.Dialer, tg.Service.Config, nil)
}

func dial(t *testing.T, tg Target) dhcp.Remote {
	t.Helper()
	if tg.Dialer == nil {
		t.Fatal("dhcptest: Target.Dialer is required")
	}
	r, err := tg.Dialer.Dial(context.Background())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func mustConfigure(t *testing.T, p *dhcp.Phase, e dhcp.Entry, changed bool) dhcp.Result {
	t.Helper()
	res, err := p.Configure(context.Background(), e)
	if err != nil {
		t.Fatalf("Configure(%s): %v", e.Hostname, err)
	}
	if res.Changed != changed {
		t.Fatalf("Configure(%s): changed = %v, want %v", e.Hostname, res.Changed, changed)
	}
	return res
}

// mustLock takes the lock within a generous bound: a lock that is free (or
// whose holder's session ended) must be granted.
func mustLock(t *testing.T, r dhcp.Remote, p string) func() error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := r.Lock(ctx, p)
	if err != nil {
		t.Fatalf("Lock(%s): %v", p, err)
	}
	return u
}

// assertNoLeftovers checks that no backup or temporary file is left in dir.
func assertNoLeftovers(t *testing.T, tg Target, dir string) {
	t.Helper()
	out := runExit(t, tg.Remote, "ls -A -- "+dhcp.ShellQuote(dir), 0)
	for _, name := range strings.Fields(string(out.Output)) {
		if strings.HasPrefix(name, ".") {
			t.Fatalf("%s holds %q after the change ended; want only host files", dir, name)
		}
	}
}

// cutOff is a Dialer whose sessions lose their connection right after the
// upload of file succeeds: the worker is cut off after the new file went
// live, before the service tested it, and cannot roll back.
type cutOff struct {
	d    dhcp.Dialer
	file string
}

func (c cutOff) Dial(ctx context.Context) (dhcp.Remote, error) {
	r, err := c.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &cutRemote{Remote: r, file: c.file}, nil
}

type cutRemote struct {
	dhcp.Remote
	file string
	mu   sync.Mutex
	cut  bool
}

func (r *cutRemote) down(op string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cut {
		return &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: op, Err: errors.New("connection lost (cut off by the contract suite)")}
	}
	return nil
}

func (r *cutRemote) Hash(ctx context.Context, paths ...string) ([]string, error) {
	if err := r.down("hash"); err != nil {
		return nil, err
	}
	return r.Remote.Hash(ctx, paths...)
}

func (r *cutRemote) Read(ctx context.Context, p string) ([]byte, bool, error) {
	if err := r.down("read"); err != nil {
		return nil, false, err
	}
	return r.Remote.Read(ctx, p)
}

func (r *cutRemote) Upload(ctx context.Context, p string, data []byte) error {
	if err := r.down("upload"); err != nil {
		return err
	}
	err := r.Remote.Upload(ctx, p, data)
	if err == nil && p == r.file {
		r.mu.Lock()
		r.cut = true
		r.mu.Unlock()
	}
	return err
}

func (r *cutRemote) Remove(ctx context.Context, p string) error {
	if err := r.down("remove"); err != nil {
		return err
	}
	err := r.Remote.Remove(ctx, p)
	if err == nil && p == r.file {
		// A removal of the host file is cut off the same way.
		r.mu.Lock()
		r.cut = true
		r.mu.Unlock()
	}
	return err
}

func (r *cutRemote) Lock(ctx context.Context, p string) (func() error, error) {
	if err := r.down("lock"); err != nil {
		return nil, err
	}
	return r.Remote.Lock(ctx, p)
}

func (r *cutRemote) Run(ctx context.Context, command string) (dhcp.Output, error) {
	if err := r.down("run"); err != nil {
		return dhcp.Output{}, err
	}
	return r.Remote.Run(ctx, command)
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
	mustHashSum(t, r, p, dhcp.SHA256(data))
}

func mustHashSum(t *testing.T, r dhcp.Remote, p, want string) {
	t.Helper()
	sums, err := r.Hash(context.Background(), p)
	if err != nil {
		t.Fatalf("Hash(%s): %v", p, err)
	}
	if len(sums) != 1 || sums[0] != want {
		t.Fatalf("Hash(%s) = %q, want [%q]", p, sums, want)
	}
}

func mustRead(t *testing.T, r dhcp.Remote, p string, data []byte) {
	t.Helper()
	b, ok, err := r.Read(context.Background(), p)
	if err != nil || !ok || !bytes.Equal(b, data) {
		t.Fatalf("Read(%s) = %d bytes, %v, %v; want the %d bytes uploaded", p, len(b), ok, err, len(data))
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
