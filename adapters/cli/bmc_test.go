package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hostforge/hostforge/internal/realdata"
)

// mockupBMC serves a real capture in DMTF mockup layout (/redfish/v1/X is
// X/index.json) read-only, as a BMC would: the service root anonymously,
// everything else behind basic auth. It counts requests that are not GET.
type mockupBMC struct {
	dir            string
	user, password string
	writes         atomic.Int32
}

func (m *mockupBMC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		m.writes.Add(1)
		http.Error(w, "read-only mockup", http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimSuffix(path.Clean(r.URL.Path), "/")
	if p != "/redfish/v1" {
		if u, pw, ok := r.BasicAuth(); !ok || u != m.user || pw != m.password {
			http.Error(w, `{"error": {"code": "Base.1.0.NoValidSession"}}`, http.StatusUnauthorized)
			return
		}
	}
	b, err := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(p), "index.json"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func TestBMCDetect(t *testing.T) {
	env := map[string]string{EnvBMCPassword: "calvin-test"}
	for _, tc := range []struct {
		name    string
		capture []string
		code    int
		vendor  string
		golden  string
	}{
		{"dell idrac9", []string{"redfish", "dell", "r750-idrac9"}, ExitOK, "dell", "bmc-detect-dell.txt"},
		{"lenovo xcc", []string{"redfish", "lenovo", "sr670v2-xcc"}, ExitOK, "lenovo", "bmc-detect-lenovo.txt"},
		{"ami megarac", []string{"redfish", "ami", "dgx-h100-megarac"}, ExitOK, "ami", "bmc-detect-ami.txt"},
		{"supermicro", []string{"redfish", "supermicro", "sys-821ge-tnhr"}, ExitOK, "supermicro", "bmc-detect-supermicro.txt"},
		{"hpe ilo", []string{"redfish", "other", "hpe-dl385-gen10plus-ilo5"}, ExitInfra, "", "bmc-detect-hpe.txt"},
		{"generic dmtf", []string{"redfish", "dmtf", "public-rackmount1"}, ExitInfra, "", "bmc-detect-dmtf.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bmcSrv := &mockupBMC{dir: realdata.Path(t, tc.capture...), user: "root", password: env[EnvBMCPassword]}
			srv := httptest.NewServer(bmcSrv)
			defer srv.Close()

			r := run(t, "", env, "bmc", "detect", "--url", srv.URL, "--user", "root")
			wantCode(t, r, tc.code)
			golden(t, tc.golden, r.out)
			if tc.code != ExitOK {
				wantError(t, r, "BMC_VENDOR_UNSUPPORTED")
			}

			r = run(t, "", env, "bmc", "detect", "--url", srv.URL, "--user", "root", "-o", "json")
			wantCode(t, r, tc.code)
			var d detectJSON
			if err := json.Unmarshal([]byte(r.out), &d); err != nil {
				t.Fatal(err)
			}
			if d.Vendor != tc.vendor || d.Supported != (tc.vendor != "") || (d.Supported && d.Strategy == "") {
				t.Errorf("-o json: vendor %q supported %v strategy %q", d.Vendor, d.Supported, d.Strategy)
			}
			if !d.Supported && (d.Failure == nil || d.Failure.Code != "BMC_VENDOR_UNSUPPORTED") {
				t.Errorf("-o json failure: %+v", d.Failure)
			}
			if n := bmcSrv.writes.Load(); n != 0 {
				t.Errorf("detect sent %d requests that are not GET", n)
			}
		})
	}
}

func TestBMCDetectAccess(t *testing.T) {
	bmcSrv := &mockupBMC{dir: realdata.Path(t, "redfish", "dell", "r750-idrac9"), user: "root", password: "right"}
	srv := httptest.NewServer(bmcSrv)
	defer srv.Close()

	// Anonymous: the service root alone names the vendor.
	r := run(t, "", nil, "bmc", "detect", "--url", srv.URL)
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, "vendor:           dell") || !strings.Contains(r.out, "read anonymously") {
		t.Errorf("anonymous detect:\n%s", r.out)
	}

	r = run(t, "", map[string]string{EnvBMCPassword: "wrong"}, "bmc", "detect", "--url", srv.URL, "--user", "root")
	wantCode(t, r, ExitOnSite)
	wantError(t, r, "BMC_CREDENTIAL_INVALID", "refused user root")
	if strings.Contains(r.err, "wrong") {
		t.Errorf("the password leaked into the error:\n%s", r.err)
	}

	r = run(t, "", nil, "bmc", "detect", "--url", srv.URL, "--user", "root")
	wantCode(t, r, ExitUsage)
	wantError(t, r, EnvBMCPassword)

	r = run(t, "", nil, "bmc", "detect", "--url", "ftp://bmc")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "--url")

	// TLS is verified by default: a self-signed BMC is refused with the
	// fix — its own code, owned by the engineers who keep bmc.tls.
	tlsSrv := httptest.NewTLSServer(bmcSrv)
	defer tlsSrv.Close()
	r = run(t, "", nil, "bmc", "detect", "--url", tlsSrv.URL)
	wantCode(t, r, ExitInfra)
	wantError(t, r, "BMC_TLS_UNTRUSTED", "not trusted", "--ca-file", "bmc.tls")

	// The explicit opt-in reads it, and says so.
	r = run(t, "", nil, "bmc", "detect", "--url", tlsSrv.URL, "--insecure-skip-verify")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.err, "opt-in") {
		t.Errorf("skipping verification was not announced:\n%s", r.err)
	}

	// Nothing listening.
	srv.Close()
	r = run(t, "", nil, "bmc", "detect", "--url", srv.URL, "--timeout", "2s")
	wantCode(t, r, ExitOnSite)
	wantError(t, r, "BMC_UNREACHABLE")
}

// bmc detect follows links from the anonymous service root: a root that
// points its Managers at another host ("@host/x", which a URL built by
// appending the path sends to that host) is refused, and the credential
// goes nowhere but the BMC.
func TestBMCDetectRefusesLinksOffTheBMC(t *testing.T) {
	var evilHits atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		evilHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Members": [{"@odata.id": "/redfish/v1/Managers/1"}]}`))
	}))
	defer evil.Close()
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	for _, link := range []string{"@" + evilHost + "/redfish/v1/Managers", "//" + evilHost + "/redfish/v1/Managers", "/redfish/v1/../../x"} {
		t.Run(link, func(t *testing.T) {
			bmcSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"Vendor": "Dell", "RedfishVersion": "1.11.0", "Managers": {"@odata.id": "` + link + `"}, "Systems": {"@odata.id": "/redfish/v1/Systems"}}`))
			}))
			defer bmcSrv.Close()
			for _, out := range []string{"text", "json"} {
				r := run(t, "", map[string]string{EnvBMCPassword: "calvin-secret"}, "bmc", "detect", "--url", bmcSrv.URL, "--user", "root", "-o", out)
				if evilHits.Load() != 0 {
					t.Fatalf("-o %s: %d requests reached the other host", out, evilHits.Load())
				}
				if r.code == ExitOK || !strings.Contains(r.err, "BMC_LINK_OFF_ORIGIN") {
					t.Fatalf("-o %s: exit %d\nstdout:\n%s\nstderr:\n%s", out, r.code, r.out, r.err)
				}
				if strings.Contains(r.out+r.err, "calvin-secret") {
					t.Fatal("the password reached the output")
				}
			}
		})
	}
}
