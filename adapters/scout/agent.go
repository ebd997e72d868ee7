package scout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/firmware"
)

// Failure codes of the agent.
var (
	// ServerUnavailable: the agent could not reach the server, or the
	// server did not answer properly.
	ServerUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "SCOUT_SERVER_UNAVAILABLE",
		Phase:     "scout",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The agent could not reach the hostforge worker's agent server (--server) or it did not answer: check the URL, the network from the host and that a worker serves the agent route; run 'hostforge scout' again (a reported task is never run twice).",
	})
	// Rejected: the server refused the agent (a token it does not accept,
	// a request for another machine than the token's, a report for a task
	// the machine does not wait for), or the agent refused its own
	// settings (a server that is not https://, a client that does not
	// verify TLS).
	Rejected = hostforge.Declare(hostforge.Spec{
		Code:   "SCOUT_REJECTED",
		Phase:  "scout",
		Owner:  hostforge.OwnerInfraEng,
		Action: "The agent server refused the request, or the agent its settings (the message says why: a token the server did not make, a request for another machine than the token's, a report for a task the machine's update no longer waits for, a server that is not https://): check --server, --machine and --token-file (the host's own token, from 'hostforge scout token'); nothing was run or recorded.",
	})
)

// Agent fetches and runs a machine's upgrade task.
type Agent struct {
	// Server is the agent server's base URL (https://worker:port).
	Server string
	// Machine is this host's machine ID.
	Machine string
	// Client fetches from the server and the artifact servers; it must
	// verify TLS (hostforge scout builds one from the system roots and
	// --ca-file): a transport that skips verification is refused.
	Client *http.Client
	// Token is this machine's token (MachineToken), sent to the server
	// only, never to an artifact server.
	Token string
	// WorkDir is where a task's files are downloaded (a directory of the
	// task is made inside and removed afterwards); default the temp dir.
	WorkDir string
	Log     *slog.Logger
}

// Result is what a run did.
type Result struct {
	// Task is nil when the server had none for the machine.
	Task *Task `json:"task,omitempty"`
	// Report is what the agent reported.
	Report *Report `json:"report,omitempty"`
}

func (a *Agent) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// taskDirName keeps a task ID usable as a directory name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// Run fetches the machine's task and, when there is one, downloads and
// verifies its script and artifacts, runs the script (artifact paths as
// its arguments, in order; HOSTFORGE_TASK_ID, HOSTFORGE_FIRMWARE_COMPONENT,
// HOSTFORGE_FIRMWARE_VERSION and HOSTFORGE_ARTIFACT_DIR in its
// environment) under the execution timeout, and reports. A task that fails
// (a download, a digest, the script) is reported as failed: the error is
// for what the agent could not do with the server.
func (a *Agent) Run(ctx context.Context) (Result, error) {
	var res Result
	base, err := CheckServerURL(a.Server)
	if err != nil {
		return res, err
	}
	if err := CheckMachineID(a.Machine); err != nil {
		return res, err
	}
	if m, ok := TokenMachine(a.Token); !ok {
		return res, CredentialInvalid.New("the agent has no machine token (make one with 'hostforge scout token')")
	} else if m != a.Machine {
		return res, CredentialInvalid.New("the token is machine %q's, not %q's", m, a.Machine)
	}
	if skipsVerification(a.Client) {
		return res, Rejected.New("the agent's HTTP client does not verify TLS certificates: refused")
	}
	t, err := a.fetchTask(ctx, base)
	if err != nil || t == nil {
		return res, err
	}
	res.Task = t
	a.log().Info("agent task", "machine", a.Machine, "task", t.ID, "component", t.Component, "version", t.Version, "artifacts", len(t.Artifacts))
	rep := a.runTask(ctx, base, t)
	res.Report = &rep
	return res, a.report(ctx, base, t.ID, rep)
}

func (a *Agent) do(ctx context.Context, method string, u *url.URL, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), r)
	if err != nil {
		return nil, Rejected.Wrap(err, "building a request to %s", u.Redacted())
	}
	if a.Token != "" && sameOrigin(u, a.Server) {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := a.Client
	if c == nil {
		c = &http.Client{}
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, ServerUnavailable.Wrap(err, "%s %s", method, u.Redacted())
	}
	return resp, nil
}

// CheckServerURL parses the agent server's URL: https:// only, since the
// machine's token and its task travel over it.
func CheckServerURL(server string) (*url.URL, error) {
	u, err := url.Parse(server)
	switch {
	case err != nil || u.Host == "" || u.User != nil:
		return nil, Rejected.New("--server %q is not an https://host:port URL", server)
	case u.Scheme != "https":
		return nil, Rejected.New("--server %q: plain %s:// is refused; the agent sends its machine token and runs what the server hands it, so it speaks to the server over verified TLS only (https://)", server, u.Scheme)
	}
	return u, nil
}

// skipsVerification reports a client whose transport accepts any
// certificate.
func skipsVerification(c *http.Client) bool {
	if c == nil {
		return false
	}
	tr, ok := c.Transport.(*http.Transport)
	return ok && tr.TLSClientConfig != nil && tr.TLSClientConfig.InsecureSkipVerify
}

func sameOrigin(u *url.URL, server string) bool {
	s, err := url.Parse(server)
	return err == nil && s.Scheme == u.Scheme && s.Host == u.Host
}

func serverError(resp *http.Response, what string) error {
	var e apiError
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
	msg := e.Error
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return ServerUnavailable.New("%s: the server answered HTTP %d: %s", what, resp.StatusCode, msg)
	}
	return Rejected.New("%s: the server answered HTTP %d: %s", what, resp.StatusCode, msg)
}

func (a *Agent) fetchTask(ctx context.Context, base *url.URL) (*Task, error) {
	u := base.JoinPath(PathPrefix, "machines", a.Machine, "task")
	resp, err := a.do(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNoContent:
		return nil, nil
	case http.StatusOK:
	default:
		return nil, serverError(resp, "fetching the task of "+a.Machine)
	}
	var t Task
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&t); err != nil || t.ID == "" {
		return nil, ServerUnavailable.New("fetching the task of %s: the answer is not a task", a.Machine)
	}
	return &t, nil
}

// failed is a failed task's report.
func failed(t *Task, code int, format string, args ...any) Report {
	return Report{TaskID: t.ID, ExitCode: code, Output: tail(fmt.Sprintf(format, args...))}
}

// tail keeps the last firmware.MaxOutput bytes of s (where a script says
// why it failed), on a rune boundary.
func tail(s string) string {
	if len(s) <= firmware.MaxOutput {
		return s
	}
	cut := len(s) - firmware.MaxOutput
	for cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut++
	}
	return s[cut:]
}

func (a *Agent) runTask(ctx context.Context, base *url.URL, t *Task) Report {
	dl := time.Duration(t.Script.ArtifactDownloadTimeoutSeconds) * time.Second
	exe := time.Duration(t.Script.ExecutionTimeoutSeconds) * time.Second
	if dl <= 0 || exe <= 0 {
		return failed(t, 2, "the task's script has no execution or download timeout")
	}
	root := a.WorkDir
	if root == "" {
		root = os.TempDir()
	}
	dir, err := os.MkdirTemp(root, "hostforge-scout-"+unsafeName.ReplaceAllString(t.ID, "_")+"-")
	if err != nil {
		return failed(t, 2, "making the task's directory: %v", err)
	}
	defer os.RemoveAll(dir)
	artDir := filepath.Join(dir, "artifacts")
	if err := os.Mkdir(artDir, 0o700); err != nil {
		return failed(t, 2, "making the task's directory: %v", err)
	}
	script := filepath.Join(dir, "upgrade.sh")
	if err := a.fetchFile(ctx, base, t.Script.URL, t.Script.SHA256, script, dl, 0o700); err != nil {
		return failed(t, 2, "the script: %v", err)
	}
	var paths []string
	for i, art := range t.Artifacts {
		name := unsafeName.ReplaceAllString(art.Name, "_")
		if name == "" || name == "." || name == ".." {
			name = fmt.Sprintf("artifact-%d", i)
		}
		p := filepath.Join(artDir, fmt.Sprintf("%02d-%s", i, name))
		if err := a.fetchFile(ctx, base, art.URL, art.SHA256, p, dl, 0o600); err != nil {
			return failed(t, 2, "artifact %d (%s): %v", i+1, art.Name, err)
		}
		paths = append(paths, p)
	}
	return a.execute(ctx, t, script, artDir, paths, exe)
}

// fetchFile downloads ref (relative to the server, or absolute) into dst
// under timeout and checks its sha256, which is required.
func (a *Agent) fetchFile(ctx context.Context, base *url.URL, ref, sum, dst string, timeout time.Duration, mode os.FileMode) error {
	want := strings.ToLower(strings.TrimSpace(sum))
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("no SHA-256 digest to verify it against (%q): refused", sum)
	}
	u, err := base.Parse(ref)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an http(s) URL", ref)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := a.do(ctx, http.MethodGet, u, nil)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("not downloaded within %s", timeout)
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered HTTP %d", u.Redacted(), resp.StatusCode)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("not downloaded within %s (%d bytes so far)", timeout, n)
		}
		return fmt.Errorf("downloading %s: %v", u.Redacted(), err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("its sha256 is %s, the task says %s", got, want)
	}
	return nil
}

// execute runs the script under its timeout.
func (a *Agent) execute(ctx context.Context, t *Task, script, artDir string, args []string, timeout time.Duration) Report {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, script, args...)
	cmd.Dir = filepath.Dir(script)
	env := []string{"HOSTFORGE_TASK_ID=" + t.ID, "HOSTFORGE_MACHINE_ID=" + t.MachineID, "HOSTFORGE_FIRMWARE_COMPONENT=" + string(t.Component),
		"HOSTFORGE_FIRMWARE_VERSION=" + t.Version, "HOSTFORGE_ARTIFACT_DIR=" + artDir}
	for _, k := range []string{"PATH", "HOME", "LANG", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = env
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	ownGroup(cmd, 10*time.Second)
	start := time.Now()
	err := cmd.Run()
	rep := Report{TaskID: t.ID, Output: tail(out.String())}
	var ee *exec.ExitError
	switch {
	case err == nil:
		rep.OK = true
	case runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		rep.ExitCode = -1
		rep.Output = tail("killed after the execution timeout of " + timeout.String() + "\n" + out.String())
	case errors.As(err, &ee):
		rep.ExitCode = ee.ExitCode()
	default:
		rep.ExitCode = 126
		rep.Output = tail(fmt.Sprintf("could not run the script: %v", err))
	}
	a.log().Info("agent script ended", "task", t.ID, "ok", rep.OK, "exit_code", rep.ExitCode, "took", time.Since(start).Round(time.Millisecond))
	return rep
}

// tailBuffer keeps the last 64 KiB written.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - 64<<10; over > 0 {
		t.b = append(t.b[:0:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// report posts the result, again on a server that does not answer (a few
// times, a few seconds apart): the script must not run twice for want of
// a report.
func (a *Agent) report(ctx context.Context, base *url.URL, id string, rep Report) error {
	rep.MachineID = a.Machine
	body, _ := json.Marshal(rep)
	u := base.JoinPath(PathPrefix, "machines", a.Machine, "tasks", id, "report")
	var last error
	for attempt := range 5 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return hostforge.Cancelled.Wrap(ctx.Err(), "reporting task %s", id)
			case <-time.After(time.Duration(attempt) * 2 * time.Second):
			}
		}
		resp, err := a.do(ctx, http.MethodPost, u, body)
		if err != nil {
			last = err
			continue
		}
		func() {
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusOK {
				last = nil
				return
			}
			last = serverError(resp, "reporting task "+id)
		}()
		if last == nil || Rejected.Is(last) {
			return last
		}
	}
	return last
}
