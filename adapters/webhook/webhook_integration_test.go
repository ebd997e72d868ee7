//go:build integration

package webhook_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/webhook"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/internal/itenv"
)

// receiverJS is a webhook receiver on the Standard Webhooks reference
// library: it verifies each delivery with Webhook.verify, answers 204 when
// the signature holds and 401 when it does not, answers 503 to the first
// attempt of each delivery under /flaky, and prints a JSON line per
// request.
const receiverJS = `
const http = require("http");
const { Webhook } = require("standardwebhooks");
const secret = process.env.SECRET;
const wh = process.env.FORMAT === "raw" ? new Webhook(secret, { format: "raw" }) : new Webhook(secret);
const attempts = {};
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString();
    const id = req.headers["webhook-id"] || "";
    attempts[id] = (attempts[id] || 0) + 1;
    let verified = true, why = "";
    try { wh.verify(body, req.headers); } catch (e) { verified = false; why = e.message; }
    let status = verified ? 204 : 401;
    if (verified && req.url.startsWith("/flaky") && attempts[id] === 1) status = 503;
    console.log(JSON.stringify({ id, verified, why, status, attempt: attempts[id], body }));
    res.writeHead(status, { "Content-Type": "text/plain" });
    res.end(verified ? "" : "signature: " + why);
  });
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
`

type seen struct {
	ID       string `json:"id"`
	Verified bool   `json:"verified"`
	Why      string `json:"why"`
	Status   int    `json:"status"`
	Attempt  int    `json:"attempt"`
	Body     string `json:"body"`
}

// nodeReceiver starts the receiver with secret in format ("" or "raw").
func nodeReceiver(t *testing.T, secret, format string) (url string, got func() []seen) {
	t.Helper()
	modules := itenv.Var(t, "HOSTFORGE_STANDARDWEBHOOKS_NODE_PATH", "scripts/integration.d/webhook.sh did not install standardwebhooks")
	script := filepath.Join(t.TempDir(), "receiver.js")
	if err := os.WriteFile(script, []byte(receiverJS), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SECRET="+secret, "FORMAT="+format)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []seen
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
			var s seen
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
		t.Fatal("the node receiver did not start")
	}
	return url, func() []seen {
		// The receiver prints its line before it answers; a short pause
		// lets the last line through the pipe.
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), lines...)
	}
}

func TestReferenceLibraryVerifiesDeliveries(t *testing.T) {
	tests := []struct {
		name, vaultSecret, receiverSecret, format, path string
		retries                                         int
		code                                            string
		attempts                                        int
	}{
		{"whsec secret", whsec, whsec, "", "/hooks", 0, "", 1},
		{"raw secret", "plain-text-secret", "plain-text-secret", "raw", "/hooks", 0, "", 1},
		{"a retry is signed again", whsec, whsec, "", "/flaky", 2, "", 2},
		{"a wrong secret is refused by the receiver", "whsec_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", whsec, "", "/hooks", 2, webhook.Rejected.Code, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url, got := nodeReceiver(t, tc.receiverSecret, tc.format)
			r := newRunner(t, webhook.Config{Vault: memVault{"hook-signing": {"password": tc.vaultSecret}}, RetryWait: 10 * time.Millisecond})
			req := request(url+tc.path, extensions.WebhookOptions{SigningSecret: "hook-signing", Retries: tc.retries})
			req.Body = `{"serial": "6SBT0R3", "note": "ünïcödé"}`
			_, err := r.Run(context.Background(), req)
			if tc.code == "" && err != nil || tc.code != "" && !strings.Contains(fmt.Sprint(err), tc.code) {
				t.Fatalf("error %v, want %q", err, tc.code)
			}
			lines := got()
			if len(lines) != tc.attempts {
				t.Fatalf("the receiver saw %d attempts, want %d: %+v", len(lines), tc.attempts, lines)
			}
			for i, s := range lines {
				if s.ID != req.DeliveryID || s.Body != req.Body {
					t.Errorf("attempt %d: id %s body %q", i+1, s.ID, s.Body)
				}
				if s.Verified != (tc.code == "") {
					t.Errorf("attempt %d: verified %v (%s)", i+1, s.Verified, s.Why)
				}
			}
		})
	}
}
