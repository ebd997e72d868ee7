//go:build integration

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/retirement"
)

// retireJSONLines runs 'hostforge retire' in-process and decodes its -o json.
func retireJSONLines(t *testing.T, ctx context.Context, args ...string) ([]retireJSON, result) {
	t.Helper()
	return jsonLines[retireJSON](t, ctx, "retire", args...)
}

// TestRetireOnRealIronicAndEnrolAgain: a lab host enrolled on a real Ironic
// 2023.1 (fake-hardware with the direct deploy interface, the lab playing
// the agent, so cleaning runs the agent's steps), the real sshd as the
// DHCP server (its config checked by the real dhcpd -t), NetBox and the BMC
// emulated over HTTPS, the SQLite ledger and a webhook receiver behind an
// extensions: section — is retired:
//
//   - the first retirement's erase fails on the agent (a failing disk):
//     the node goes to clean failed and Ironic's node history records the
//     failed erase_devices_metadata step; nothing after the erase was
//     written (the reservation, NetBox, the receiver);
//   - the rerun recovers the node and erases it: erase_devices_metadata
//     runs as a manual clean step (the agent ran it towards manageable),
//     the node is deleted, the DHCP server holds no reservation (dhcpd -t
//     passes on what it would load), the ledger holds no proof or platform
//     class, the NetBox emulator shows offline with journal entries naming
//     the run (retired, announced), the receiver got serverDecommissioned and serverDeleteDNS
//     under the delivery IDs the result lists;
//   - a third run writes nothing visible (two journal entries, two
//     deliveries);
//   - staged again, the host enrols again to available, with a BMC
//     credential that is neither the factory's nor the archived one.
func TestRetireOnRealIronicAndEnrolAgain(t *testing.T) {
	ironicURL, inspectorURL := itEnv(t, "HOSTFORGE_IRONIC_AGENT_URL"), itEnv(t, "HOSTFORGE_IRONIC_AGENT_INSPECTOR_URL")
	dhcpd := itEnv(t, "HOSTFORGE_DHCPD")
	sshd := sshdTarget(t)
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "it-retire-" + hex.EncodeToString(rnd[:]), Class: intent.ClassCPUBaremetal, Vendor: "dell"})
	uniqueMACs(t, site, h, rnd)
	l, err := lab.Start(context.Background(), lab.Options{
		Dir: filepath.Join(t.TempDir(), "lab"), Site: site, IronicURL: ironicURL, InspectorURL: inspectorURL, Agent: true,
		SSH: sshd,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	ic, err := ironicapi.New(context.Background(), ironicapi.Config{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	r := &realLab{Lab: l, host: h, ironic: ic}
	t.Cleanup(func() {
		if n, err := ic.GetNode(context.Background(), h.Name); err == nil {
			_ = ic.SetMaintenance(context.Background(), n.UUID, true, "test cleanup")
		}
		r.deleteNode(t)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	agent := l.Agent()

	// Enrolled, its automated cleaning run by the agent.
	enrolled, res := enrollJSONLines(t, ctx, "--config", l.Config, "--log-level", "info", h.Name)
	if res.code != ExitOK || len(enrolled) != 1 || !enrolled[0].Enrolled || enrolled[0].ProvisionState != ironic.StateAvailable {
		t.Fatalf("enroll: exit %d\n%s\n%s", res.code, res.out, res.err)
	}
	node := enrolled[0].Node
	if p := enrolled[0].Proof; p == nil || p.Action != enrollment.ProofEstablished {
		t.Fatalf("enroll: proof %+v", p)
	}
	if !ranStep(agent.Ran(h.Name), ironic.EraseMetadata, ironic.StateAvailable) {
		t.Fatalf("the enrollment's automated cleaning ran no %s on the agent: %+v", ironic.EraseMetadata, agent.Ran(h.Name))
	}
	v, err := vault.Open(filepath.Join(l.Dir, lab.VaultFile))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := v.Item(ctx, enrollment.AdminItem(h.Name))
	if err != nil {
		t.Fatal(err)
	}
	reservation := filepath.Join(l.Dir, lab.DHCPDir, "hostforge.d", h.Name+".conf")
	assembled := filepath.Join(l.Dir, lab.DHCPDir, "dhcpd.conf")
	checkDHCPD(t, dhcpd, assembled, h.OOBIP, true)

	// The retire: and extensions: sections; NetBox decommissioning.
	recv := &signedReceiver{key: mustB64(t, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	if err := v.PutItem(ctx, "retire-hook", map[string]string{"password": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}); err != nil {
		t.Fatal(err)
	}
	appendRetireSections(t, l.Config, srv.URL)
	_ = l.Site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName(h.Name).Status = string(intent.StatusDecommissioning)
		return nil
	})

	// 1. The erase fails on the disk: clean failed, in the node's history;
	// nothing after the erase is written.
	agent.FailStep(h.Name, ironic.EraseMetadata, 1)
	failed, res := retireJSONLines(t, ctx, "--config", l.Config, "--log-level", "info", "--max-attempts", "1", h.Name)
	t.Logf("retire (failing erase):\n%s", res.err)
	if len(failed) != 1 || failed[0].Failure == nil || failed[0].Failure.Code != ironic.EraseFailed.Code || res.code != ExitInfra {
		t.Fatalf("retire with a failing erase: exit %d\n%s", res.code, res.out)
	}
	n, err := ic.GetNode(ctx, h.Name)
	if err != nil || n.ProvisionState != ironic.StateCleanFailed {
		t.Fatalf("node after the failed erase: %+v, %v", n, err)
	}
	hist, err := ic.History(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if !historyNames(hist, ironic.EraseMetadata) {
		t.Fatalf("Ironic's node history has no error naming %s: %+v", ironic.EraseMetadata, hist)
	}
	if _, err := os.Stat(reservation); err != nil {
		t.Fatalf("the failed retirement removed the reservation: %v", err)
	}
	if d, _ := l.Site.NetBox.Device(ctx, h.Name); d.Status != intent.StatusDecommissioning {
		t.Fatalf("the failed retirement moved NetBox to %s", d.Status)
	}
	if ids, _ := recv.got(); len(ids) != 0 {
		t.Fatalf("the failed retirement fired %v", ids)
	}

	// 2. The rerun recovers the node, erases it and retires the host.
	done, res := retireJSONLines(t, ctx, "--config", l.Config, "--log-level", "info", h.Name)
	t.Logf("retire:\n%s", res.err)
	if res.code != ExitOK || len(done) != 1 || !done[0].Retired || done[0].Node != node || done[0].Erase != string(retirement.EraseMetadata) {
		t.Fatalf("retire: exit %d\n%s", res.code, res.out)
	}
	j := done[0]
	ran := agent.Ran(h.Name)
	if last := ran[len(ran)-1]; last.Step.String() != ironic.EraseMetadata.String() || last.Target != ironic.StateManageable || last.Failed {
		t.Fatalf("the agent's last step %+v, want %s run by a manual clean (towards manageable)", last, ironic.EraseMetadata)
	}
	if _, err := ic.GetNode(ctx, h.Name); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("the node is still in Ironic: %v", err)
	}
	if _, err := os.Stat(reservation); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the reservation is still on the DHCP server: %v", err)
	}
	checkDHCPD(t, dhcpd, assembled, h.OOBIP, false)
	sr := run(t, "", nil, "ledger", "show", "--config", l.Config, "-o", "json", h.Name)
	var rec ledgerShowJSON
	if err := json.Unmarshal([]byte(sr.out), &rec); err != nil {
		t.Fatalf("ledger show: %v\n%s%s", err, sr.out, sr.err)
	}
	if rec.Proof != nil || rec.PlatformClass != "" {
		t.Fatalf("the ledger still holds proof %+v, platform class %q", rec.Proof, rec.PlatformClass)
	}
	status, journal := netboxOverHTTPS(t, l, h.Name)
	// The journal: the retirement, then its announcement, both naming the run.
	if status != string(intent.StatusOffline) || len(journal) != 2 || !strings.Contains(journal[0], j.Run+": retired") ||
		!strings.Contains(journal[1], j.Run+": announced "+retirement.StageDecommissioned+", "+retirement.StageDeleteDNS) {
		t.Fatalf("the NetBox emulator: status %q, journal %q (run %s)", status, journal, j.Run)
	}
	ids, bodies := recv.got()
	if len(ids) != 2 || len(j.Deliveries) != 2 {
		t.Fatalf("deliveries received %v, reported %+v", ids, j.Deliveries)
	}
	for i, stage := range retirement.Stages {
		d := j.Deliveries[i]
		if d.Stage != stage || d.Status != retirement.DeliverySucceeded || d.DeliveryID != ids[i] || !strings.HasPrefix(d.Event, j.Run) {
			t.Errorf("delivery %d: %+v, received %s", i, d, ids[i])
		}
		if !bytes.Contains(bodies[i], []byte(`"stage": "`+stage+`"`)) || !bytes.Contains(bodies[i], []byte(h.Name)) {
			t.Errorf("the %s delivery: %s", stage, bodies[i])
		}
	}
	archived, err := v.Item(ctx, bmc.ArchivedItem(enrollment.AdminItem(h.Name)))
	if err != nil || archived[bmc.FieldPassword] != admin[bmc.FieldPassword] {
		t.Fatalf("the archived credential: %v (matches the enrolment's: %v)", err, archived[bmc.FieldPassword] == admin[bmc.FieldPassword])
	}

	// 3. Retired: a rerun changes nothing anyone can see.
	again, res := retireJSONLines(t, ctx, "--config", l.Config, "--log-level", "off", h.Name)
	if res.code != ExitOK || len(again) != 1 || !again[0].Retired || again[0].Run != j.Run {
		t.Fatalf("the retired host's rerun: exit %d\n%s", res.code, res.out)
	}
	if _, journal := netboxOverHTTPS(t, l, h.Name); len(journal) != 2 {
		t.Fatalf("the rerun wrote to the journal: %q", journal)
	}
	if ids, _ := recv.got(); len(ids) != 2 {
		t.Fatalf("the rerun fired again: %v", ids)
	}

	// 4. Staged again, it enrols again to available with a fresh credential.
	_ = l.Site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName(h.Name).Status = string(intent.StatusStaged)
		return nil
	})
	again2, res := enrollJSONLines(t, ctx, "--config", l.Config, "--log-level", "info", h.Name)
	if res.code != ExitOK || len(again2) != 1 || !again2[0].Enrolled || again2[0].ProvisionState != ironic.StateAvailable || again2[0].Node == node {
		t.Fatalf("re-enroll: exit %d\n%s\n%s", res.code, res.out, res.err)
	}
	fresh, err := v.Item(ctx, enrollment.AdminItem(h.Name))
	factory, _ := v.Item(ctx, enrollment.DefaultFactoryItem)
	if err != nil || fresh[bmc.FieldPassword] == "" || fresh[bmc.FieldPassword] == archived[bmc.FieldPassword] || fresh[bmc.FieldPassword] == factory[bmc.FieldPassword] {
		t.Fatalf("the re-enrolment's credential is not fresh: %v", err)
	}
	if _, err := os.Stat(reservation); err != nil {
		t.Fatalf("the re-enrolment left no reservation: %v", err)
	}
	checkDHCPD(t, dhcpd, assembled, h.OOBIP, true)
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ranStep(ran []lab.AgentStep, step ironic.CleanStep, target string) bool {
	for _, s := range ran {
		if s.Step.String() == step.String() && s.Target == target && !s.Failed {
			return true
		}
	}
	return false
}

func historyNames(hist []ironicapi.HistoryEvent, step ironic.CleanStep) bool {
	for _, e := range hist {
		if e.Severity == "ERROR" && strings.Contains(e.Event, step.String()) {
			return true
		}
	}
	return false
}

// checkDHCPD checks the config the lab's DHCP server assembled (what it
// would load) with the real dhcpd -t, and whether it holds the host's
// reservation.
func checkDHCPD(t *testing.T, dhcpd, conf, oobIP string, want bool) {
	t.Helper()
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Contains(b, []byte(oobIP)); got != want {
		t.Fatalf("the DHCP server's config holds the reservation of %s: %v, want %v:\n%s", oobIP, got, want, b)
	}
	if out, err := exec.Command(dhcpd, "-t", "-q", "-cf", conf).CombinedOutput(); err != nil {
		t.Fatalf("dhcpd -t on the DHCP server's config: %v\n%s\n%s", err, out, b)
	}
}

// appendRetireSections adds retire: and an extensions: section whose one
// definition sends each retirement stage to the receiver, signed.
func appendRetireSections(t *testing.T, config, receiver string) {
	t.Helper()
	defs := t.TempDir()
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "retirement", "label": "retirement", "extensionType": "workflow",
 "vendor": "hostforge", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "configVars": [], "assets": [],
 "onAssetChange": [
  {"stage": "serverDecommissioned", "tasks": [{"label": "forget", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "` + receiver + `/decommissioned", "method": "POST", "signingSecret": "retire-hook", "retries": 2,
     "requestTemplate": "{\"stage\": \"serverDecommissioned\", \"device\": {{ server.netboxDevice | dump }}, \"status\": {{ server.serverStatus | dump }}}"}}]},
  {"stage": "serverDeleteDNS", "tasks": [{"label": "delete-record", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "` + receiver + `/dns", "method": "POST", "signingSecret": "retire-hook", "retries": 2,
     "requestTemplate": "{\"stage\": \"serverDeleteDNS\", \"fqdn\": {{ serverDNSRecordSet.fqdn | dump }}, \"operation\": {{ serverDNSRecordSet.operation | dump }}}"}}]}]}`
	if err := os.WriteFile(filepath.Join(defs, "retirement.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	section := fmt.Sprintf("extensions:\n  definitions: %q\n  asset_cache: %q\n", defs, t.TempDir()) +
		"retire:\n  erase: metadata\n  archive_retention: 720h\n  dns_zone: {name: lab.example.net, soa_email: admin.lab.example.net, name_servers: [ns1.example.net], ttl: 300}\n"
	appendConfig(t, config, section)
}

// appendConfig adds section at the end of the config file.
func appendConfig(t *testing.T, config, section string) {
	t.Helper()
	f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(section)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// netboxOverHTTPS reads the device's status and its journal's comments from
// the NetBox emulator, over its REST API as a client sees it.
func netboxOverHTTPS(t *testing.T, l *lab.Lab, device string) (string, []string) {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(l.Dir, lab.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	token, err := os.ReadFile(filepath.Join(l.Dir, lab.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer c.CloseIdleConnections()
	get := func(path string, out any) {
		req, _ := http.NewRequest(http.MethodGet, l.NetBoxURL+path, nil)
		req.Header.Set("Authorization", "Token "+strings.TrimSpace(string(token)))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var devs struct {
		Results []struct {
			ID     int `json:"id"`
			Status struct {
				Value string `json:"value"`
			} `json:"status"`
		} `json:"results"`
	}
	get("/api/dcim/devices/?"+url.Values{"name": {device}}.Encode(), &devs)
	if len(devs.Results) != 1 {
		t.Fatalf("the NetBox emulator lists %d devices named %s", len(devs.Results), device)
	}
	var js struct {
		Results []struct {
			Comments string `json:"comments"`
		} `json:"results"`
	}
	get(fmt.Sprintf("/api/extras/journal-entries/?assigned_object_type=dcim.device&assigned_object_id=%d", devs.Results[0].ID), &js)
	var comments []string
	for _, e := range js.Results {
		comments = append(comments, e.Comments)
	}
	return devs.Results[0].Status.Value, comments
}
