package firmware

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

// ScoutDir is the packaged on-host agent scripts: a directory laid out as
// <dir>/<vendor>/<model>/<component>/upgrade.sh with a metadata.toml
// beside each script (NICo's /opt/carbide/scout-firmware-scripts). It
// implements ScoutScripts.
type ScoutDir struct {
	Dir string
}

var _ ScoutScripts = ScoutDir{}

// ScoutScriptName and ScoutMetadataName are the files of a packaged script.
const (
	ScoutScriptName   = "upgrade.sh"
	ScoutMetadataName = "metadata.toml"
)

// ScoutSegment turns a vendor, model or component name into its directory
// name: lower-cased, spaces turned into "_"; ok is false when anything but
// [a-z0-9_-] is left (such a name has no packaged script).
func ScoutSegment(s string) (string, bool) {
	seg := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "_")
	if seg == "" {
		return "", false
	}
	for _, r := range seg {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "", false
		}
	}
	return seg, true
}

// ScoutPath is the directory of the packaged script of a vendor, model and
// component under dir; ok is false when a segment is not allowed.
func ScoutPath(dir, vendor, model string, c ComponentType) (string, bool) {
	parts := []string{dir}
	for _, s := range []string{vendor, model, string(c)} {
		seg, ok := ScoutSegment(s)
		if !ok {
			return "", false
		}
		parts = append(parts, seg)
	}
	return filepath.Join(parts...), true
}

// Lookup finds the packaged script of a vendor, model and component, with
// its metadata and its sha256. No script is not an error; a script whose
// metadata is missing or invalid is FIRMWARE_CATALOG_INVALID (the package
// is broken and must be fixed, not skipped silently to another route).
func (d ScoutDir) Lookup(_ context.Context, vendor, model string, c ComponentType) (ScoutScript, bool, error) {
	if d.Dir == "" {
		return ScoutScript{}, false, nil
	}
	dir, ok := ScoutPath(d.Dir, vendor, model, c)
	if !ok {
		return ScoutScript{}, false, nil
	}
	script := filepath.Join(dir, ScoutScriptName)
	body, err := os.ReadFile(script)
	if errors.Is(err, fs.ErrNotExist) {
		return ScoutScript{}, false, nil
	}
	if err != nil {
		return ScoutScript{}, false, CatalogInvalid.Wrap(err, "reading the agent script %s", script)
	}
	meta := filepath.Join(dir, ScoutMetadataName)
	raw, err := os.ReadFile(meta)
	if err != nil {
		return ScoutScript{}, false, CatalogInvalid.Wrap(err, "the agent script %s has no readable %s beside it", script, ScoutMetadataName)
	}
	exec, download, err := ParseScoutMetadata(raw)
	if err != nil {
		return ScoutScript{}, false, CatalogInvalid.Wrap(err, "%s", meta)
	}
	sum := sha256.Sum256(body)
	return ScoutScript{Path: script, SHA256: hex.EncodeToString(sum[:]), ExecutionTimeout: exec, DownloadTimeout: download}, true, nil
}

// maxScoutTimeout bounds each timeout of a script's metadata: the agent's
// deadline is capped at 5 h anyway.
const maxScoutTimeout = 24 * time.Hour

// ParseScoutMetadata reads a packaged script's metadata.toml: exactly
// execution_timeout_seconds and artifact_download_timeout_seconds, both
// whole numbers of seconds above zero (at most a day). Anything else is
// refused.
func ParseScoutMetadata(data []byte) (execution, download time.Duration, err error) {
	var m struct {
		Execution *int64 `toml:"execution_timeout_seconds"`
		Download  *int64 `toml:"artifact_download_timeout_seconds"`
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			return 0, 0, fmt.Errorf("unknown field: %s", strings.TrimSpace(strict.String()))
		}
		return 0, 0, err
	}
	get := func(key string, v *int64) (time.Duration, error) {
		switch {
		case v == nil:
			return 0, fmt.Errorf("%s is missing", key)
		case *v <= 0:
			return 0, fmt.Errorf("%s = %d: want a number of seconds above zero", key, *v)
		case time.Duration(*v)*time.Second > maxScoutTimeout:
			return 0, fmt.Errorf("%s = %d: want at most %d", key, *v, int64(maxScoutTimeout/time.Second))
		}
		return time.Duration(*v) * time.Second, nil
	}
	if execution, err = get("execution_timeout_seconds", m.Execution); err != nil {
		return 0, 0, err
	}
	if download, err = get("artifact_download_timeout_seconds", m.Download); err != nil {
		return 0, 0, err
	}
	return execution, download, nil
}

// ScoutDeadline is how long the agent has for a task: 30 s + execution
// timeout + download timeout × files + 30 min, at most 5 h.
func ScoutDeadline(s ScoutScript, files int) time.Duration { return scoutDeadline(s, files) }
