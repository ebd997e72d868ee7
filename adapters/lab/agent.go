package lab

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// Agent plays the Ironic Python Agent for the lab's hosts during in-band
// cleaning, as Ramdisk plays it during inspection: Ironic's fake-hardware
// driver with the direct deploy interface boots no real ramdisk, so the
// node waits in "clean wait" for an agent that never comes — unless
// something does what the agent does:
//
//  1. look the node up (GET /v1/lookup?node_uuid=), which hands the agent
//     its token;
//  2. heartbeat (POST /v1/heartbeat/{node}) with its callback URL, every
//     Every while the node waits;
//  3. answer the conductor on that URL: clean.get_clean_steps (the generic
//     hardware manager's erase steps), clean.execute_clean_step, and the
//     command status list, checking the token on every command.
//
// Steps "run" at once and succeed, unless FailStep scripted a failure;
// every step run is recorded with the provision target the conductor was
// cleaning towards (manageable for a manual clean, available for the
// automated clean of provide). Each lookup starts a fresh "boot": the
// command list is empty again, as a rebooted ramdisk's is.
type Agent struct {
	Site      *fakes.Site
	IronicURL string
	// Every is the polling and heartbeat period (500 ms).
	Every time.Duration
	HTTP  *http.Client
	Log   *slog.Logger

	mu    sync.Mutex
	base  string
	nodes map[string]*agentNode // by node UUID
	fail  map[string]int        // "host/interface.step" → failures left
	ran   []AgentStep
}

// AgentStep is one clean step the agent ran (or failed) for Ironic.
type AgentStep struct {
	Host   string
	Node   string
	Step   ironic.CleanStep
	Target string // the node's target provision state: manageable, available
	Failed bool
	At     time.Time
}

type agentNode struct {
	uuid, host string
	token      string
	commands   []map[string]any
	seq        int
}

// FailStep makes the next n runs of step on host fail, as a failing disk
// does: the conductor sees the command FAILED, and the node goes to clean
// failed with maintenance set (recorded in its history).
func (a *Agent) FailStep(host string, step ironic.CleanStep, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail == nil {
		a.fail = map[string]int{}
	}
	a.fail[host+"/"+step.String()] = n
}

// Ran lists the steps the agent ran for host, in order.
func (a *Agent) Ran(host string) []AgentStep {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []AgentStep
	for _, s := range a.ran {
		if s.Host == host {
			out = append(out, s)
		}
	}
	return out
}

// genericSteps are the generic hardware manager's clean steps the agent
// offers, with IPA's own priorities: automated cleaning runs the metadata
// erase (99), then the full erase (10).
var genericSteps = []map[string]any{
	{"step": "erase_devices_metadata", "priority": 99, "interface": "deploy", "reboot_requested": false, "abortable": true},
	{"step": "erase_devices", "priority": 10, "interface": "deploy", "reboot_requested": false, "abortable": true},
	{"step": "erase_pstore", "priority": 0, "interface": "deploy", "reboot_requested": false, "abortable": true},
	{"step": "delete_configuration", "priority": 0, "interface": "raid", "reboot_requested": false, "abortable": true},
}

// Run serves the agent's command API on a loopback port and heartbeats for
// the lab's nodes in clean wait until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(a.serve), ReadHeaderTimeout: 10 * time.Second, ErrorLog: quietLog}
	a.mu.Lock()
	a.base = "http://" + ln.Addr().String()
	if a.nodes == nil {
		a.nodes = map[string]*agentNode{}
	}
	a.mu.Unlock()
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	if a.HTTP == nil {
		a.HTTP = &http.Client{Timeout: 30 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	every := a.Every
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for ctx.Err() == nil {
		a.Once(ctx)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-done
	a.HTTP.CloseIdleConnections()
	return nil
}

// Once heartbeats once for every lab node in clean wait.
func (a *Agent) Once(ctx context.Context) {
	var list struct {
		Nodes []nodeRef `json:"nodes"`
	}
	q := url.Values{"provision_state": {ironic.StateCleanWait}, "fields": {"uuid,name"}}
	if err := a.ironic(ctx, http.MethodGet, "/v1/nodes?"+q.Encode(), nil, &list); err != nil {
		if ctx.Err() == nil {
			a.log().Debug("lab agent: listing nodes in clean wait", "error", err)
		}
		return
	}
	for _, n := range list.Nodes {
		if _, ok := a.Site.Host(n.Name); !ok {
			continue
		}
		if err := a.heartbeat(ctx, n); err != nil && ctx.Err() == nil {
			a.log().Warn("lab agent: heartbeat", "device", n.Name, "node", n.UUID, "error", err)
		}
	}
}

func (a *Agent) heartbeat(ctx context.Context, n nodeRef) error {
	a.mu.Lock()
	st := a.nodes[n.UUID]
	if st == nil {
		st = &agentNode{uuid: n.UUID, host: n.Name}
		a.nodes[n.UUID] = st
	}
	token, base := st.token, a.base
	a.mu.Unlock()
	if token == "" {
		// A fresh boot of the ramdisk: look up, get the token.
		var lk struct {
			Config struct {
				Token string `json:"agent_token"`
			} `json:"config"`
		}
		if err := a.ironic(ctx, http.MethodGet, "/v1/lookup?"+url.Values{"node_uuid": {n.UUID}}.Encode(), nil, &lk); err != nil {
			return fmt.Errorf("lookup: %w", err)
		}
		if lk.Config.Token == "" || strings.Trim(lk.Config.Token, "*") == "" {
			return fmt.Errorf("lookup: Ironic handed no usable agent token (it gave one to an earlier boot)")
		}
		a.mu.Lock()
		st.token, st.commands, token = lk.Config.Token, nil, lk.Config.Token
		a.mu.Unlock()
	}
	body := map[string]any{"callback_url": base + "/" + n.UUID, "agent_version": "9.4.0", "agent_token": token}
	err := a.ironic(ctx, http.MethodPost, "/v1/heartbeat/"+url.PathEscape(n.UUID), body, nil)
	if err != nil && strings.Contains(err.Error(), "agent token") {
		// The token of a boot Ironic ended (cleaning finished or failed):
		// the next heartbeat is a new boot's.
		a.mu.Lock()
		st.token = ""
		a.mu.Unlock()
	}
	return err
}

// serve is the agent's command API: /{node}/v1/commands/.
func (a *Agent) serve(w http.ResponseWriter, r *http.Request) {
	uuid, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	a.mu.Lock()
	st := a.nodes[uuid]
	a.mu.Unlock()
	if st == nil || strings.TrimSuffix(rest, "/") != "v1/commands" {
		agentError(w, http.StatusNotFound, "no such command endpoint")
		return
	}
	switch r.Method {
	case http.MethodGet:
		a.mu.Lock()
		cmds := append([]map[string]any{}, st.commands...)
		a.mu.Unlock()
		writeAgentJSON(w, http.StatusOK, map[string]any{"commands": cmds})
	case http.MethodPost:
		a.command(w, r, st)
	default:
		agentError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

func (a *Agent) command(w http.ResponseWriter, r *http.Request, st *agentNode) {
	a.mu.Lock()
	token := st.token
	a.mu.Unlock()
	// The agent authenticates the conductor by the token of this boot.
	if got := r.URL.Query().Get("agent_token"); token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		agentError(w, http.StatusUnauthorized, "invalid or missing agent_token")
		return
	}
	var req struct {
		Name   string `json:"name"`
		Params struct {
			Step ironic.CleanStep `json:"step"`
			Node struct {
				Target string `json:"target_provision_state"`
			} `json:"node"`
		} `json:"params"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&req); err != nil {
		agentError(w, http.StatusBadRequest, "malformed command")
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	st.seq++
	cmd := map[string]any{"id": fmt.Sprintf("cmd-%d", st.seq), "command_error": nil}
	switch req.Name {
	case "clean.get_clean_steps":
		cmd["command_name"], cmd["command_status"] = "get_clean_steps", "SUCCEEDED"
		cmd["command_result"] = map[string]any{
			"clean_steps":              map[string]any{"GenericHardwareManager": genericSteps},
			"hardware_manager_version": map[string]any{"generic_hardware_manager": "1.1"},
		}
	case "clean.execute_clean_step":
		s := req.Params.Step
		cmd["command_name"] = "execute_clean_step"
		ran := AgentStep{Host: st.host, Node: st.uuid, Step: ironic.CleanStep{Interface: s.Interface, Step: s.Step}, Target: req.Params.Node.Target, At: time.Now()}
		if k := st.host + "/" + ran.Step.String(); a.fail[k] > 0 {
			a.fail[k]--
			ran.Failed = true
			cmd["command_status"] = "FAILED"
			cmd["command_error"] = map[string]any{"type": "BlockDeviceEraseError", "code": 500,
				"message": "Error erasing block device", "details": "lab agent: " + ran.Step.String() + " failed on the lab's disk"}
		} else {
			cmd["command_status"] = "SUCCEEDED"
			cmd["command_result"] = map[string]any{"clean_result": nil, "clean_step": req.Params.Step}
		}
		a.ran = append(a.ran, ran)
		a.log().Info("lab agent: clean step", "device", st.host, "step", ran.Step.String(), "target", ran.Target, "failed", ran.Failed)
	default:
		agentError(w, http.StatusBadRequest, "unknown command "+req.Name)
		return
	}
	st.commands = append(st.commands, cmd)
	writeAgentJSON(w, http.StatusOK, cmd)
}

func writeAgentJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func agentError(w http.ResponseWriter, status int, msg string) {
	writeAgentJSON(w, status, map[string]any{"faultstring": msg, "type": "InvalidCommandError", "code": status})
}

// ironic makes one call of Ironic's API: the ramdisk endpoints (lookup,
// heartbeat) and the node list.
func (a *Agent) ironic(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.IronicURL, "/")+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", ironicapi.MinMicroversion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return doJSON(a.HTTP, req, 4<<20, out)
}

func (a *Agent) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
