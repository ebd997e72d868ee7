// Package scout is the on-host agent route of firmware updates: the
// server the worker runs (Server, an http.Handler) and the agent that
// 'hostforge scout' runs on the host (Agent).
//
// The update workflow offers a task by storing it (firmware.StoredScout);
// the agent fetches it, downloads the packaged script and the artifacts,
// verifies each against its sha256, runs the script under the metadata's
// execution timeout and reports the result, which the server checks
// against the task the machine's update waits for (the task ID must
// match) and persists (output capped at 1,500 characters). The workflow
// picks the result up at its next poll; a task not reported by its
// deadline (30 s + execution timeout + download timeout × files + 30 min,
// at most 5 h) fails the attempt.
//
// The protocol is JSON over HTTPS:
//
//	GET  /scout/v1/machines/{machine}/task                      200 Task, 204 none
//	GET  /scout/v1/machines/{machine}/tasks/{task}/script       the script
//	GET  /scout/v1/machines/{machine}/tasks/{task}/artifacts/{i} an artifact the worker holds as a file
//	POST /scout/v1/machines/{machine}/tasks/{task}/report       Report → 204, 409 for another task
//
// Any request without a valid machine token is 401; a request for another
// machine than its token's is 403.
//
// # Every request is one machine's
//
// Every request carries "Authorization: Bearer <token>", the machine's own
// token (MachineToken): the machine ID and HMAC-SHA256 of it under the
// site secret, a vault item only the worker and the operator who
// provisions hosts read ('hostforge scout token --config F --machine ID'
// prints one). The token names the machine it claims, so nothing else has
// to; the server recomputes the MAC and compares it in constant time, and
// the request is authenticated as exactly that machine. A token the site
// secret did not make is refused 401. A request whose path (or report
// body) names another machine than the one its token proves is refused 403
// before the store is read: nothing is returned and nothing stored, so a
// host (possibly with a tenant's root on it) can neither read another
// machine's task, script or artifact URLs nor report for another machine
// or take its task. Task IDs carry 128 random bits (the firmware workflow
// draws them), so none can be derived from another. A server without a
// site secret of at least MinSiteSecretLen characters refuses everything.
//
// The agent speaks HTTPS only (an http:// server is refused), verifies the
// server's certificate and sends its token to the server's origin only.
package scout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
)

// PathPrefix is where the server's routes live.
const PathPrefix = "/scout/v1/"

// Task is what the agent fetches: one upgrade to run.
type Task struct {
	ID        string                 `json:"id"`
	MachineID string                 `json:"machine_id"`
	Component firmware.ComponentType `json:"component"`
	Version   string                 `json:"version"`
	Script    Script                 `json:"script"`
	Artifacts []Artifact             `json:"artifacts"`
	Deadline  time.Time              `json:"deadline"`
}

// Script is the packaged script of a task.
type Script struct {
	// URL is the script's location, relative to the server.
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	// The metadata's timeouts, in seconds.
	ExecutionTimeoutSeconds        int64 `json:"execution_timeout_seconds"`
	ArtifactDownloadTimeoutSeconds int64 `json:"artifact_download_timeout_seconds"`
}

// Artifact is one file the script needs.
type Artifact struct {
	// Name is the file name the agent saves it under.
	Name string `json:"name"`
	// URL is absolute (the catalog's) or relative to the server (a file
	// the worker holds).
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

// Report is the agent's result of a task.
type Report struct {
	TaskID   string `json:"task_id"`
	OK       bool   `json:"ok"`
	ExitCode int    `json:"exit_code"`
	// Output is the script's output (or why it did not run), capped by the
	// server at firmware.MaxOutput.
	Output string `json:"output"`
	// MachineID, when set, must be the machine the request is
	// authenticated as.
	MachineID string `json:"machine_id,omitempty"`
}

// Server serves the agents' tasks from the firmware store.
type Server struct {
	Store firmware.Store
	Clock clock.Clock
	// SiteSecret is the secret every machine's token is derived from
	// (MachineToken); required, at least MinSiteSecretLen bytes. It is
	// never logged.
	SiteSecret []byte
	Log        *slog.Logger

	mu     sync.Mutex
	hashes map[string]fileHash // path → digest of a served artifact file
}

type fileHash struct {
	size  int64
	mtime time.Time
	sum   string
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

func (s *Server) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP routes the agent's requests.
// ServeHTTP authenticates the request as one machine and routes it; a
// request for another machine is refused before anything is read.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if utf8.RuneCount(s.SiteSecret) < MinSiteSecretLen {
		s.log().Error("the agent server has no site secret of at least 8 characters: every request is refused")
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "the agent server is not configured to authenticate agents", Code: CredentialInvalid.Code})
		return
	}
	machine, ok := authenticate(s.SiteSecret, r)
	if !ok {
		s.log().Info("agent request without a valid machine token", "remote", r.RemoteAddr, "path", r.URL.Path)
		w.Header().Set("WWW-Authenticate", `Bearer realm="hostforge-scout"`)
		writeJSON(w, http.StatusUnauthorized, apiError{Error: "a valid machine token is required (hostforge scout token)"})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, PathPrefix+"machines/")
	if !ok {
		writeJSON(w, http.StatusNotFound, apiError{Error: "no such route"})
		return
	}
	parts := strings.Split(rest, "/")
	if parts[0] != machine {
		s.forbidden(w, r, machine, parts[0])
		return
	}
	ctx := r.Context()
	switch {
	case len(parts) == 2 && parts[1] == "task" && r.Method == http.MethodGet:
		s.task(ctx, w, machine)
	case len(parts) == 4 && parts[1] == "tasks" && parts[3] == "script" && r.Method == http.MethodGet:
		s.script(ctx, w, r, machine, parts[2])
	case len(parts) == 5 && parts[1] == "tasks" && parts[3] == "artifacts" && r.Method == http.MethodGet:
		s.artifact(ctx, w, r, machine, parts[2], parts[4])
	case len(parts) == 4 && parts[1] == "tasks" && parts[3] == "report" && r.Method == http.MethodPost:
		s.report(ctx, w, r, machine, parts[2])
	default:
		writeJSON(w, http.StatusNotFound, apiError{Error: "no such route"})
	}
}

// forbidden refuses a request of an authenticated machine that names
// another: a host speaking for a machine it is not.
func (s *Server) forbidden(w http.ResponseWriter, r *http.Request, authenticated, named string) {
	s.log().Warn("agent request refused: it names another machine than its token proves", "authenticated", authenticated, "named", named,
		"remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	writeJSON(w, http.StatusForbidden, apiError{Error: fmt.Sprintf("this token is machine %s's; the request names machine %q", authenticated, named)})
}

// offered returns the machine's offered task; handled is true when it
// already answered the request (the store did not answer).
func (s *Server) offered(ctx context.Context, w http.ResponseWriter, machine string) (t firmware.ScoutTask, ok, handled bool) {
	t, ok, err := firmware.OfferedScoutTask(ctx, s.Store, s.now(), machine)
	if err != nil {
		s.log().Error("reading an agent task", "machine", machine, "err", err)
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "the state store did not answer; try again", Code: hostforge.CodeOf(err)})
		return t, false, true
	}
	return t, ok, false
}

func (s *Server) task(ctx context.Context, w http.ResponseWriter, machine string) {
	t, ok, handled := s.offered(ctx, w, machine)
	if handled {
		return
	}
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	base := PathPrefix + "machines/" + machine + "/tasks/" + t.ID
	out := Task{ID: t.ID, MachineID: t.MachineID, Component: t.Component, Version: t.Version, Deadline: t.Deadline,
		Script: Script{URL: base + "/script", SHA256: t.Script.SHA256,
			ExecutionTimeoutSeconds: int64(t.Script.ExecutionTimeout / time.Second), ArtifactDownloadTimeoutSeconds: int64(t.Script.DownloadTimeout / time.Second)}}
	for i, a := range t.Artifacts {
		x := Artifact{URL: a.URL, SHA256: strings.ToLower(a.SHA256)}
		if a.Filename != "" {
			x.Name = filepath.Base(a.Filename)
			x.URL = base + "/artifacts/" + strconv.Itoa(i)
			if x.SHA256 == "" {
				sum, err := s.hash(a.Filename)
				if err != nil {
					s.log().Error("an artifact of an agent task cannot be read", "machine", machine, "task", t.ID, "artifact", a.Filename, "err", err)
				}
				x.SHA256 = sum
			}
		} else {
			x.Name = artifactName(a.URL, i)
		}
		out.Artifacts = append(out.Artifacts, x)
	}
	writeJSON(w, http.StatusOK, out)
}

func artifactName(raw string, i int) string {
	name := raw
	if j := strings.IndexAny(name, "?#"); j >= 0 {
		name = name[:j]
	}
	name = filepath.Base(name)
	if name == "." || name == "/" || name == "" || strings.Contains(name, ":") {
		name = fmt.Sprintf("artifact-%d", i)
	}
	return name
}

// hash returns a file's sha256, computed once per size and mtime.
func (s *Server) hash(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	h, ok := s.hashes[p]
	s.mu.Unlock()
	if ok && h.size == st.Size() && h.mtime.Equal(st.ModTime()) {
		return h.sum, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d := sha256.New()
	if _, err := io.Copy(d, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(d.Sum(nil))
	s.mu.Lock()
	if s.hashes == nil {
		s.hashes = map[string]fileHash{}
	}
	s.hashes[p] = fileHash{size: st.Size(), mtime: st.ModTime(), sum: sum}
	s.mu.Unlock()
	return sum, nil
}

func (s *Server) script(ctx context.Context, w http.ResponseWriter, r *http.Request, machine, id string) {
	t, ok, handled := s.offered(ctx, w, machine)
	if handled {
		return
	}
	if !ok || t.ID != id {
		writeJSON(w, http.StatusNotFound, apiError{Error: "no such task for this machine"})
		return
	}
	http.ServeFile(w, r, t.Script.Path)
}

func (s *Server) artifact(ctx context.Context, w http.ResponseWriter, r *http.Request, machine, id, idx string) {
	t, ok, handled := s.offered(ctx, w, machine)
	if handled {
		return
	}
	i, err := strconv.Atoi(idx)
	if !ok || t.ID != id || err != nil || i < 0 || i >= len(t.Artifacts) || t.Artifacts[i].Filename == "" {
		writeJSON(w, http.StatusNotFound, apiError{Error: "no such artifact for this machine's task"})
		return
	}
	http.ServeFile(w, r, t.Artifacts[i].Filename)
}

func (s *Server) report(ctx context.Context, w http.ResponseWriter, r *http.Request, machine, id string) {
	var rep Report
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&rep); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "the report is not valid JSON"})
		return
	}
	if rep.MachineID != "" && rep.MachineID != machine {
		s.forbidden(w, r, machine, rep.MachineID)
		return
	}
	if rep.TaskID != "" && rep.TaskID != id {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "the report's task_id differs from the task in its path"})
		return
	}
	out := rep.Output
	if !rep.OK {
		out = fmt.Sprintf("exit code %d: %s", rep.ExitCode, rep.Output)
	}
	err := firmware.ReportScout(ctx, s.Store, s.now(), machine, id, rep.OK, out)
	switch {
	case firmware.RequestRefused.Is(err):
		writeJSON(w, http.StatusConflict, apiError{Error: err.Error(), Code: firmware.RequestRefused.Code})
		return
	case err != nil:
		s.log().Error("storing an agent report", "machine", machine, "task", id, "err", err)
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "the state store did not answer; report again", Code: hostforge.CodeOf(err)})
		return
	}
	s.log().Info("agent report", "machine", machine, "task", id, "ok", rep.OK, "exit_code", rep.ExitCode)
	w.WriteHeader(http.StatusNoContent)
}
