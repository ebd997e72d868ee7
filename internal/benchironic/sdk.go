package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed sdk.py
var sdkScript []byte

// runSDK runs the openstacksdk side with python (Debian's python3 with
// python3-openstacksdk) against the proxy. The wall time is the script's
// own, from its first create to its last available node, so interpreter
// start-up and version discovery are not billed to it.
func runSDK(ctx context.Context, python, endpoint string, nodes []benchNode) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "bench-ironic-sdk")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "sdk.py")
	if err := os.WriteFile(script, sdkScript, 0o600); err != nil {
		return 0, err
	}
	in, err := json.Marshal(map[string]any{"endpoint": endpoint, "nodes": nodes})
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, python, script)
	// Debian's interpreter with its own packages, whatever the caller's
	// Python environment says.
	cmd.Env = withoutPythonEnv(os.Environ())
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("openstacksdk: %v: %s", err, tail(stderr.String(), 2000))
	}
	var out struct {
		Wall float64 `json:"wall_s"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
		return 0, fmt.Errorf("openstacksdk: unreadable result %q: %v", tail(stdout.String(), 500), err)
	}
	return time.Duration(out.Wall * float64(time.Second)), nil
}

func withoutPythonEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "PYTHONPATH=") || strings.HasPrefix(kv, "PYTHONHOME=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
