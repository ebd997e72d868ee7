package redfish_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/internal/realdata"
)

// Fuzzing the adapter's Redfish document parsing: one attempt of the BMC
// phase runs against an emulated BMC of each vendor, with one of the
// documents it reads (chosen by the fuzzer) replaced by arbitrary bytes.
// Whatever the BMC sends, the attempt ends done, waiting or in a declared,
// classified failure — never a panic, never UNCLASSIFIED. Seeds are real
// captures of each vendor's BMC.

const fuzzAdminPW = "Fuzz-Admin-Password-1"

// handlerTransport serves requests from a handler in memory: no sockets, so
// an iteration costs microseconds and leaves no connection behind.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// substitute answers GETs of one path with doc, and everything else from
// the emulator; it logs the GET paths in order.
type substitute struct {
	e    *redfishemu.Emulator
	path string
	doc  []byte
	mu   sync.Mutex
	gets []string
}

func (s *substitute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if r.Method == http.MethodGet {
		s.mu.Lock()
		s.gets = append(s.gets, p)
		s.mu.Unlock()
		if p == s.path {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(s.doc)
			return
		}
	}
	s.e.ServeHTTP(w, r)
}

// fuzzAttempt runs one attempt of the BMC phase against an emulator of
// vendor whose document at path reads doc ("" replaces nothing).
func fuzzAttempt(t testing.TB, vendor, path string, doc []byte) (*substitute, error) {
	site := fakes.NewSite()
	e, err := redfishemu.New(vendor, redfishemu.Options{Clock: site.Clock, AdminPassword: fuzzAdminPW})
	if err != nil {
		t.Fatal(err)
	}
	s := &substitute{e: e, path: path, doc: doc}
	c := &redfish.Connector{Scheme: "http", Transport: handlerTransport{s}, Timeout: 5 * time.Second}
	site.Vault.Set("bmc-admin-fuzz", map[string]string{bmc.FieldUsername: e.AdminUser(), bmc.FieldPassword: fuzzAdminPW})
	site.Vault.Set(fakes.FactoryItem, map[string]string{bmc.FieldUsername: e.AdminUser(), bmc.FieldPassword: "factory-password-1"})
	cfg := &bmc.Configurator{Connector: c, Vault: site.Vault, Clock: site.Clock}
	tg := bmc.Target{Device: "fuzz-node", Address: "bmc.fuzz.invalid", AdminItem: "bmc-admin-fuzz", FactoryItem: fakes.FactoryItem,
		MonitoringItem: fakes.MonitoringItem, NTPServers: []string{"10.0.0.11"}, SyslogServers: []string{"10.0.0.21"},
		ProvisioningMAC: "b8:3f:d2:90:97:c4", RestrictBoot: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = cfg.Configure(ctx, tg)
	return s, err
}

var (
	readsOnce sync.Once
	reads     map[string][]string // vendor → the distinct GET paths of one attempt
)

// attemptReads lists, per vendor, the documents one attempt reads.
func attemptReads(t testing.TB) map[string][]string {
	readsOnce.Do(func() {
		reads = map[string][]string{}
		for _, v := range redfishemu.Vendors {
			s, _ := fuzzAttempt(t, v, "", nil)
			seen := map[string]bool{}
			for _, p := range s.gets {
				if !seen[p] {
					seen[p] = true
					reads[v] = append(reads[v], p)
				}
			}
		}
	})
	return reads
}

// captureDirs are real BMC trees, in DMTF mockup layout, per emulated vendor.
var captureDirs = map[string]string{
	"dell":       "redfish/dell/r750-idrac9",
	"lenovo":     "redfish/lenovo/sr670v2-xcc",
	"ami":        "redfish/ami/dgx-h100-megarac",
	"supermicro": "redfish/supermicro/sys-821ge-tnhr",
}

// capture finds the real document of the same kind as the emulator's path:
// the capture's own file at that path, else one whose path ends the same.
func capture(root, p string) []byte {
	var byTail []string
	tail := p[strings.LastIndex(p, "/")+1:]
	_ = filepath.WalkDir(root, func(f string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(f) != "index.json" {
			return nil
		}
		rel := "/" + filepath.ToSlash(filepath.Dir(strings.TrimPrefix(f, root)))
		rel = strings.TrimPrefix(rel, "/")
		if "/"+rel == p {
			byTail = append([]string{f}, byTail...)
		} else if strings.HasSuffix(rel, "/"+tail) {
			byTail = append(byTail, f)
		}
		return nil
	})
	if len(byTail) == 0 {
		return nil
	}
	b, err := os.ReadFile(byTail[0])
	if err != nil {
		return nil
	}
	return b
}

func FuzzRedfishDocuments(f *testing.F) {
	all := attemptReads(f)
	for vi, v := range redfishemu.Vendors {
		root := realdata.Path(f, captureDirs[v])
		for pi, p := range all[v] {
			if doc := capture(root, p); doc != nil {
				f.Add(uint8(vi), uint8(pi), doc)
			}
		}
		// The emulator's own shapes, and a few malformed ones.
		f.Add(uint8(vi), uint8(0), []byte(`{"@odata.id": "/redfish/v1", "Oem": {"Dell": null}}`))
		f.Add(uint8(vi), uint8(1), []byte(`{"Members": [{"@odata.id": 7}], "Members@odata.count": -1}`))
		f.Add(uint8(vi), uint8(2), []byte(`[]`))
	}
	f.Fuzz(func(t *testing.T, vendor, which uint8, doc []byte) {
		v := redfishemu.Vendors[int(vendor)%len(redfishemu.Vendors)]
		paths := all[v]
		if len(paths) == 0 {
			t.Skip("the attempt reads nothing")
		}
		p := paths[int(which)%len(paths)]
		_, err := fuzzAttempt(t, v, p, doc)
		if err == nil {
			return
		}
		if _, waiting := hostforge.AsWait(err); waiting {
			return
		}
		fl, ok := hostforge.AsFailure(err)
		if !ok {
			t.Fatalf("%s with %s replaced: an error that is neither a wait nor a failure: %v", v, p, err)
		}
		if fl.Code == hostforge.Unclassified.Code {
			t.Fatalf("%s with %s replaced: UNCLASSIFIED: %v", v, p, err)
		}
		if _, declared := hostforge.Lookup(fl.Code); !declared {
			t.Fatalf("%s with %s replaced: undeclared code %s", v, p, fl.Code)
		}
	})
}

// TestFuzzAttemptReadsEveryVendor: the fuzz target's clean attempt reads
// documents of every vendor, and a replaced document is noticed.
func TestFuzzAttemptReadsEveryVendor(t *testing.T) {
	for v, paths := range attemptReads(t) {
		if len(paths) < 5 {
			t.Errorf("%s: the attempt read only %v", v, paths)
		}
	}
	if _, err := fuzzAttempt(t, "dell", "/redfish/v1", []byte(`{`)); err == nil {
		t.Fatal("a malformed service root went unnoticed")
	}
}
