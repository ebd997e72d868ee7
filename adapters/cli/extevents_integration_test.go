//go:build integration

package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/extevents"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// swReceiverJS is a webhook receiver on the Standard Webhooks reference
// library (standardwebhooks on npm): each request is verified with
// Webhook.verify and printed as a JSON line; 204 when it verifies, 401
// when it does not.
const swReceiverJS = `
const http = require("http");
const { Webhook } = require("standardwebhooks");
const wh = new Webhook(process.env.SECRET);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString();
    let verified = true, why = "";
    try { wh.verify(body, req.headers); } catch (e) { verified = false; why = e.message; }
    console.log(JSON.stringify({ id: req.headers["webhook-id"] || "", verified, why, path: req.url, body }));
    res.writeHead(verified ? 204 : 401);
    res.end();
  });
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
`

type swSeen struct {
	ID       string `json:"id"`
	Verified bool   `json:"verified"`
	Why      string `json:"why"`
	Path     string `json:"path"`
	Body     string `json:"body"`
}

// swReceiver starts the Standard Webhooks receiver with the signing
// secret (whsec_...).
func swReceiver(t *testing.T, secret string) (url string, got func() []swSeen) {
	t.Helper()
	modules := itEnv(t, "HOSTFORGE_STANDARDWEBHOOKS_NODE_PATH")
	script := filepath.Join(t.TempDir(), "receiver.js")
	if err := os.WriteFile(script, []byte(swReceiverJS), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SECRET="+secret)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []swSeen
	ports := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var p struct{ Port int }
			if json.Unmarshal(sc.Bytes(), &p) == nil && p.Port != 0 {
				ports <- p.Port
				continue
			}
			var s swSeen
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				mu.Lock()
				lines = append(lines, s)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	select {
	case port := <-ports:
		url = fmt.Sprintf("http://127.0.0.1:%d", port)
	case <-time.After(20 * time.Second):
		t.Fatal("the Standard Webhooks receiver did not start")
	}
	return url, func() []swSeen {
		mu.Lock()
		defer mu.Unlock()
		return append([]swSeen(nil), lines...)
	}
}

const signingSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// checkDecommissioned waits for the receiver's one verified delivery of
// serverDecommissioned and checks it carries the device's fields; then
// history lists it.
func checkDecommissioned(t *testing.T, l *lab.Lab, got func() []swSeen, device string, id int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); len(got()) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the receiver got nothing")
		}
	}
	time.Sleep(500 * time.Millisecond) // anything more would arrive now
	seen := got()
	if len(seen) != 1 || !seen[0].Verified || seen[0].Path != "/retired" {
		t.Fatalf("the receiver got %+v: want one delivery whose Standard Webhooks signature verifies", seen)
	}
	var body map[string]string
	if err := json.Unmarshal([]byte(seen[0].Body), &body); err != nil {
		t.Fatal(err)
	}
	var serial string
	l.Site.NetBox.View(func(st *fakes.NetBoxState) { serial = st.Devices[id].Serial })
	if body["device"] != device || body["serial"] != serial || serial == "" || body["status"] != "decommissioning" {
		t.Errorf("serverDecommissioned body %v: want the device's name, serial and status", body)
	}
	r := run(t, "", nil, "extensions", "history", "--config", l.Config, "--stage", "serverDecommissioned", "-o", "json")
	wantCode(t, r, ExitOK)
	var rows []historyJSON
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("history %s (%v)", r.out, err)
	}
	h := rows[0]
	if h.DeliveryID != seen[0].ID || h.Status != "succeeded" || h.Extension != "retire" || h.Task != "notify" || h.Attempts != 1 ||
		!strings.HasSuffix(h.EventID, fmt.Sprintf("/dcim.device/%d/serverDecommissioned", id)) || h.FinishedAt == nil {
		t.Errorf("history row %+v", h)
	}
}

// TestNetBoxEventRuleThroughTheWorker: a NetBox event rule (the
// emulator's, signed as NetBox signs) reaches the endpoint of 'hostforge worker';
// the event is dispatched on the real Temporal dev server, and a
// receiver on the Standard Webhooks reference library gets
// serverDecommissioned with the device's fields and a valid signature. The
// same change sent by a rule with another secret is answered 401 and
// fires nothing.
func TestNetBoxEventRuleThroughTheWorker(t *testing.T) {
	temporalAddr := itEnv(t, "HOSTFORGE_TEMPORAL_ADDRESS")
	url, got := swReceiver(t, signingSecret)
	l, _, client := eventsLab(t, context.Background(), retireDef(url), "127.0.0.1:0")
	var b [3]byte
	_, _ = rand.Read(b[:])
	queue := "it-events-" + hex.EncodeToString(b[:])
	w := startProcess(t, "worker", "--config", l.Config, "--temporal", temporalAddr, "--task-queue", queue, "--log-level", "info", "--stop-timeout", "5s")
	w.waitOutput(t, "worker polling task queue "+queue, 60*time.Second)
	m := endpointLine.FindStringSubmatch(w.out.String())
	if m == nil {
		t.Fatalf("the worker serves no NetBox events endpoint:\n%s", w.out.String())
	}
	id, statuses := decommission(t, l, m[1], client, "cpu-r1-u11")
	if statuses["hostforge"] != http.StatusAccepted || statuses["impostor"] != http.StatusUnauthorized {
		t.Fatalf("the endpoint answered %v: want 202 for the signed request, 401 for the other", statuses)
	}
	checkDecommissioned(t, l, got, "cpu-r1-u11", id)
	client.CloseIdleConnections()
	if strings.Contains(w.out.String(), "n3tb0x-hook-secret") {
		t.Error("the webhook's secret reached the worker's log")
	}
}

// TestNetBoxEventRuleThroughListen: the same, through 'hostforge
// extensions listen' (its own process), without Temporal.
func TestNetBoxEventRuleThroughListen(t *testing.T) {
	url, got := swReceiver(t, signingSecret)
	l, _, client := eventsLab(t, context.Background(), retireDef(url), "127.0.0.1:0")
	p := startProcess(t, "extensions", "listen", "--config", l.Config, "--log-level", "info", "--stop-timeout", "5s")
	p.waitOutput(t, "dispatching in process", 60*time.Second)
	m := endpointLine.FindStringSubmatch(p.out.String())
	if m == nil {
		t.Fatalf("listen serves no endpoint:\n%s", p.out.String())
	}
	id, statuses := decommission(t, l, m[1], client, "cpu-r1-u10")
	if statuses["hostforge"] != http.StatusAccepted || statuses["impostor"] != http.StatusUnauthorized {
		t.Fatalf("the endpoint answered %v: want 202 for the signed request, 401 for the other", statuses)
	}
	checkDecommissioned(t, l, got, "cpu-r1-u10", id)
	client.CloseIdleConnections()
}

// TestIronicDeployFiresServerInstanceUpdate: a node on the real Ironic
// (fake-hardware) deployed with an instance, then torn down: the
// projection, wired from the config, fires serverInstanceUpdate once per
// transition it sees, in process on the state store; passes that see the
// same state again fire nothing new. The receiver (Standard Webhooks) gets
// each; history lists each delivery.
func TestIronicDeployFiresServerInstanceUpdate(t *testing.T) {
	ironicURL := itEnv(t, "HOSTFORGE_IRONIC_URL")
	url, got := swReceiver(t, signingSecret)
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "instances", "label": "instances", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverInstanceUpdate", "tasks": [{"label": "tell", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "` + url + `/instances", "method": "POST", "signingSecret": "notify-signing",
     "requestTemplate": "{{ serverInstanceRecordSet | dump }}"}}]}]}`
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, _, _ := eventsLab(t, ctx, def, "127.0.0.1:0")
	// The lab's config names its Ironic instance on loopback; point it at
	// the real one, whose nodes the projection lists.
	b, _ := os.ReadFile(l.Config)
	doc := strings.Replace(string(b), "gates:", fmt.Sprintf("ironic:\n  - name: %s\n    url: %s\n    device_classes: [CPU_BAREMETAL, GPU_COMPUTE, HYPERVISOR]\ngates:", lab.IronicInstance, ironicURL), 1)
	if err := os.WriteFile(l.Config, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := wiring.Load(l.Config)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := wiring.Open(ctx, cfg, wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if sys.Projector == nil || sys.DeployWatcher == nil || sys.Projector.Observer == nil {
		t.Fatal("the wiring did not give the projection its deploy watcher")
	}
	local := extevents.NewLocal(sys.Extensions, clock.Real{}, sys.Log, 16)
	defer local.Close(context.Background())
	sys.DeployWatcher.Submitter = local

	c, err := ironicapi.New(ctx, ironicapi.Config{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	var rb [4]byte
	_, _ = rand.Read(rb[:])
	name := "it-deploy-" + hex.EncodeToString(rb[:])
	n, err := c.CreateNode(ctx, ironic.NodeCreate{Name: name, Driver: ironic.DriverFakeHardware})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 40 {
			if c.DeleteNode(context.Background(), n.UUID) == nil {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	})
	instance := fmt.Sprintf("%08x-0000-4000-8000-%012x", rb, time.Now().UnixNano()&0xffffffffffff)
	seenPhases := map[string]bool{}
	// drive requests a provision action and projects until the node is in
	// want, every pass noting the phase it saw.
	drive := func(action, want string) {
		t.Helper()
		for range 40 {
			if err := c.ChangeProvisionState(ctx, n.UUID, action); err == nil {
				break
			} else if !ironic.IsNodeLocked(err) {
				t.Fatalf("%s: %v", action, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			if _, err := sys.Projector.Project(ctx); err != nil {
				t.Logf("projection: %v", err)
			}
			cur, err := c.GetNode(ctx, n.UUID)
			if err != nil {
				t.Fatal(err)
			}
			seenPhases[cur.ProvisionState] = true
			if cur.ProvisionState == want {
				// The pass above may have listed the node just before
				// it got here: one more pass sees it in want, as a
				// worker's next pass would before the node moves on.
				if _, err := sys.Projector.Project(ctx); err != nil {
					t.Logf("projection: %v", err)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s is %s after %s, want %s", name, cur.ProvisionState, action, want)
			}
		}
	}
	drive(ironic.ActionManage, ironic.StateManageable)
	drive(ironic.ActionProvide, ironic.StateAvailable)
	if _, err := c.UpdateNode(ctx, n.UUID, []ironic.PatchOp{ironic.Add("/instance_uuid", instance)}); err != nil {
		t.Fatal(err)
	}
	drive(ironic.ActionActive, ironic.StateActive)
	drive("deleted", ironic.StateAvailable)
	for range 3 { // re-projection fires nothing new
		if _, err := sys.Projector.Project(ctx); err != nil {
			t.Logf("projection: %v", err)
		}
	}
	sctx, scancel := context.WithTimeout(ctx, time.Minute)
	defer scancel()
	local.Close(sctx)

	var mine []map[string]string
	for _, s := range got() {
		var rs map[string]string
		if json.Unmarshal([]byte(s.Body), &rs) != nil || rs["ironicNode"] != n.UUID {
			continue // another test's node on the shared Ironic
		}
		if !s.Verified {
			t.Errorf("delivery %s does not verify: %s", s.ID, s.Why)
		}
		mine = append(mine, rs)
	}
	transitions := map[string]int{}
	for _, rs := range mine {
		transitions[rs["deployType"]+"/"+rs["deployStatus"]]++
		if rs["instanceUuid"] != instance || rs["netboxDevice"] != name || rs["ironicInstance"] != lab.IronicInstance {
			t.Errorf("serverInstanceRecordSet %v", rs)
		}
	}
	t.Logf("provision states seen %v; transitions fired %v", seenPhases, transitions)
	for tr, k := range transitions {
		if k != 1 {
			t.Errorf("transition %s fired %d times, want once", tr, k)
		}
	}
	for _, must := range []string{"create/finished", "delete/finished"} {
		if transitions[must] != 1 {
			t.Errorf("transition %s fired %d times, want once", must, transitions[must])
		}
	}
	if seenPhases[ironic.StateDeleting] && transitions["delete/ongoing"] != 1 {
		t.Errorf("the projection saw the node deleting, but delete/ongoing fired %d times", transitions["delete/ongoing"])
	}

	r := run(t, "", nil, "extensions", "history", "--config", l.Config, "--stage", "serverInstanceUpdate", "--extension", "instances", "-o", "json")
	wantCode(t, r, ExitOK)
	var rows []historyJSON
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, h := range rows {
		if strings.Contains(h.EventID, "/"+n.UUID+"/") {
			listed++
			if h.Status != "succeeded" || h.Attempts != 1 {
				t.Errorf("history row %+v", h)
			}
		}
	}
	if listed != len(mine) {
		t.Errorf("history lists %d deliveries of the node, the receiver got %d", listed, len(mine))
	}
}

// TestReadmeExtensionCommandsForReal runs the README's extension commands
// as written from examples/extensions, with the real runners: the fire
// plays the example's bundle with the real ansible-playbook, and outputs
// shows what the playbook wrote.
func TestReadmeExtensionCommandsForReal(t *testing.T) {
	playbook := itEnv(t, "HOSTFORGE_ANSIBLE_PLAYBOOK")
	t.Setenv("PATH", filepath.Dir(playbook)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cmds := readmeExtensionCommands(t)
	copyExamples(t)
	for _, c := range cmds {
		r := runShellArgs(t, c)
		if r.code != ExitOK {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c, " "), r.code, r.out, r.err)
		}
		if c[2] == "outputs" && (!strings.Contains(r.out, `"stage": "serverRegistered"`) || !strings.Contains(r.out, `"device": "cpu-r1-u10"`)) {
			t.Errorf("outputs after the README's fire: %s", r.out)
		}
	}
}
