package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
)

// EnvBMCPassword holds the password of 'bmc detect --user'.
const EnvBMCPassword = "HOSTFORGE_BMC_PASSWORD"

// strategies says, per vendor, which configuration steps phase 2 runs (the
// bmc package documentation is the reference).
var strategies = map[bmc.Vendor]string{
	bmc.VendorDell:       "Dell iDRAC: password, cold_reset, hostname, dhcp, security, ntp, syslog, bios (staged job), boot_order (restriction or label reorder, staged job), ipmi_user (+ IPMI over LAN)",
	bmc.VendorLenovo:     "Lenovo XCC: password, cold_reset, hostname, dhcp, security, ntp, syslog, bios (staged), boot_order (label reorder, staged), host_reset (only when something was staged), ipmi_user (+ IPMI over LAN)",
	bmc.VendorAMI:        "AMI MegaRAC: password, cold_reset, hostname, ntp, ipmi_user, virtual_media, boot_restriction",
	bmc.VendorSupermicro: "Supermicro: hostname, ntp, syslog, ipmi_user; cold_reset only when forced",
}

// detectJSON is 'bmc detect -o json'.
type detectJSON struct {
	URL             string       `json:"url"`
	Vendor          string       `json:"vendor,omitempty"`
	Supported       bool         `json:"supported"`
	Strategy        string       `json:"strategy,omitempty"`
	Identity        bmc.Identity `json:"identity"`
	ManagerModel    string       `json:"manager_model,omitempty"`
	ManagerFirmware string       `json:"manager_firmware,omitempty"`
	SystemModel     string       `json:"system_model,omitempty"`
	BIOSVersion     string       `json:"bios_version,omitempty"`
	RedfishVersion  string       `json:"redfish_version,omitempty"`
	Authenticated   bool         `json:"authenticated"`
	Failure         *failureJSON `json:"failure,omitempty"`
	Reads           []string     `json:"reads"`
}

func (a *app) bmcCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bmc",
		Short: "BMC tools",
		Args:  cobra.NoArgs,
		Example: `  HOSTFORGE_BMC_PASSWORD=... hostforge bmc detect --url https://10.10.0.12 --user root
  hostforge bmc detect --url https://10.10.0.12 --ca-file site-bmc-ca.pem -o json`,
		RunE: func(cmd *cobra.Command, _ []string) error { return usageErr(fmt.Errorf("missing subcommand: detect")) },
	}
	var o struct {
		url, user, caFile string
		insecure          bool
		timeout           time.Duration
	}
	det := &cobra.Command{
		Use:   "detect --url URL [--user U]",
		Short: "Detect a BMC's vendor, model and firmware, and the strategy phase 2 would run; never writes",
		Long: `Read a BMC's Redfish service root (anonymously) and, with --user, its first
manager and first system, then name its vendor the way phase 2 does (service
root Oem keys, Vendor, Product, manager Model and Oem keys, system
Manufacturer), its model and firmware, and the configuration strategy phase 2
would run. Only GET requests are sent: nothing on the BMC changes.

The password of --user is read from the environment variable
HOSTFORGE_BMC_PASSWORD, never from a flag. TLS is verified against the system
roots, or against --ca-file; --insecure-skip-verify is an explicit opt-in for a
lab BMC with a self-signed certificate, logged on standard error. http:// URLs
are accepted for emulators.

A BMC of no supported vendor (HPE iLO, OpenBMC, a generic DMTF service) fails
with BMC_VENDOR_UNSUPPORTED, exit code 4.

` + exitCodes(ExitOK, ExitUsage, ExitOnSite, ExitInfra, ExitBug, ExitCancelled),
		Example: `  HOSTFORGE_BMC_PASSWORD=... hostforge bmc detect --url https://10.10.0.12 --user root
  hostforge bmc detect --url https://10.10.0.12 --ca-file site-bmc-ca.pem -o json
  hostforge bmc detect --url http://127.0.0.1:8000`,
		Args: cobra.NoArgs,
	}
	f := det.Flags()
	f.StringVar(&o.url, "url", "", "the BMC's base URL, e.g. https://10.10.0.12 (http:// for emulators)")
	f.StringVar(&o.user, "user", "", "user to read the manager and system with (password from "+EnvBMCPassword+")")
	f.StringVar(&o.caFile, "ca-file", "", "PEM CA certificates to verify the BMC's certificate with, instead of the system roots")
	f.BoolVar(&o.insecure, "insecure-skip-verify", false, "do not verify the BMC's TLS certificate (explicit opt-in, logged)")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "deadline of each request")
	_ = det.MarkFlagRequired("url")
	exclusive(det, "--ca-file verifies the BMC's certificate against the CAs it holds, --insecure-skip-verify does not verify it at all; give one", "ca-file", "insecure-skip-verify")
	logLevelFlag(det)
	out := outputFlag(det)
	det.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		u, err := url.Parse(o.url)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return inputErr("--url %q: want http(s)://host[:port]", o.url)
		}
		if u.User != nil {
			return inputErr("--url carries credentials; give --user and set %s instead", EnvBMCPassword)
		}
		rd := &redfishReader{base: strings.TrimSuffix(u.String(), "/"), timeout: o.timeout}
		if o.user != "" {
			pw, ok := a.env(EnvBMCPassword)
			if a.env == nil || !ok || pw == "" {
				return inputErr("--user %s: set the password in the environment variable %s", o.user, EnvBMCPassword)
			}
			rd.user, rd.password = o.user, pw
			a.secrets.AddCredential(o.user, pw)
		}
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.caFile != "" {
			pem, err := os.ReadFile(o.caFile)
			if err != nil {
				return inputFileErr("--ca-file %s: %v", o.caFile, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return inputFileErr("--ca-file %s: no PEM certificate in it", o.caFile)
			}
			tc.RootCAs = pool
		}
		if o.insecure {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: TLS verification of %s is off by the explicit --insecure-skip-verify opt-in\n", u.Host)
			tc.InsecureSkipVerify = true // explicit opt-in, announced above
		}
		rd.client = &http.Client{Transport: &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment}, Timeout: o.timeout}
		defer rd.client.CloseIdleConnections()
		res, err := detect(cmd.Context(), rd)
		if err != nil {
			return err
		}
		res.URL = rd.base
		w := cmd.OutOrStdout()
		if *out == formatJSON {
			if err := writeJSON(w, res); err != nil {
				return err
			}
			if res.Failure != nil {
				return exitWith(exitCodeOf(&hostforge.Failure{Spec: hostforge.Spec{Code: res.Failure.Code, Owner: hostforge.Owner(res.Failure.Owner)}}))
			}
			return nil
		}
		printDetect(w, res)
		if res.Failure != nil {
			fl, _ := hostforge.Lookup(res.Failure.Code)
			printFailure(cmd.ErrOrStderr(), &hostforge.Failure{Spec: fl, Message: res.Failure.Message})
			return exitWith(exitCodeOf(&hostforge.Failure{Spec: fl}))
		}
		return nil
	}
	cmd.AddCommand(det)
	return cmd
}

// detect reads what detection needs and names the vendor.
func detect(ctx context.Context, rd *redfishReader) (detectJSON, error) {
	var res detectJSON
	root, err := rd.get(ctx, "/redfish/v1/")
	if err != nil {
		return res, err
	}
	var rootDoc struct {
		RedfishVersion string
		Managers       struct {
			ID string `json:"@odata.id"`
		}
		Systems struct {
			ID string `json:"@odata.id"`
		}
	}
	_ = json.Unmarshal(root, &rootDoc)
	res.RedfishVersion = rootDoc.RedfishVersion
	var manager, system []byte
	if rd.user != "" {
		res.Authenticated = true
		// A BMC without a manager or system resource is still detected from
		// what it has; only a refusal or an unreachable BMC stops here.
		if manager, err = rd.first(ctx, rootDoc.Managers.ID, "/redfish/v1/Managers"); err != nil && !bmc.EndpointMissing.Is(err) {
			return res, err
		}
		if system, err = rd.first(ctx, rootDoc.Systems.ID, "/redfish/v1/Systems"); err != nil && !bmc.EndpointMissing.Is(err) {
			return res, err
		}
		var m struct{ Model, FirmwareVersion string }
		var s struct{ Manufacturer, Model, BiosVersion string }
		_ = json.Unmarshal(manager, &m)
		_ = json.Unmarshal(system, &s)
		res.ManagerModel, res.ManagerFirmware = m.Model, m.FirmwareVersion
		res.SystemModel, res.BIOSVersion = strings.TrimSpace(s.Manufacturer+" "+s.Model), s.BiosVersion
	}
	res.Identity, err = bmc.IdentityFromJSON(root, manager, system)
	if err != nil {
		return res, bmc.Unreachable.Wrap(err, "%s answered documents that are not Redfish", rd.base)
	}
	v, err := bmc.Detect(res.Identity)
	if err != nil {
		_, fl, _ := hostforge.Classify(err)
		res.Failure = failureOut(fl)
	} else {
		res.Vendor, res.Supported, res.Strategy = string(v), true, strategies[v]
	}
	res.Reads = rd.reads
	return res, nil
}

func printDetect(w io.Writer, r detectJSON) {
	tw := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-17s %s\n", k+":", v)
		}
	}
	vendor := r.Vendor
	if !r.Supported {
		vendor = "unsupported"
	}
	tw("vendor", vendor)
	tw("service root", strings.TrimSpace(strings.Join([]string{r.Identity.Vendor, r.Identity.Product}, " ")))
	tw("manager model", r.ManagerModel)
	tw("manager firmware", r.ManagerFirmware)
	tw("system", r.SystemModel)
	tw("bios", r.BIOSVersion)
	tw("redfish version", r.RedfishVersion)
	tw("strategy", r.Strategy)
	if !r.Authenticated {
		fmt.Fprintln(w, "note:             read anonymously (service root only); give --user for model and firmware")
	}
}

// redfishReader sends GET requests only: it cannot change a BMC.
type redfishReader struct {
	base           string
	user, password string
	client         *http.Client
	timeout        time.Duration
	reads          []string
}

// first reads the first member of a collection.
func (rd *redfishReader) first(ctx context.Context, link, fallback string) ([]byte, error) {
	if link == "" {
		link = fallback
	}
	b, err := rd.get(ctx, link)
	if err != nil {
		return nil, err
	}
	var coll struct {
		Members []struct {
			ID string `json:"@odata.id"`
		}
	}
	if err := json.Unmarshal(b, &coll); err != nil || len(coll.Members) == 0 || coll.Members[0].ID == "" {
		return nil, bmc.EndpointMissing.New("%s%s lists no member", rd.base, link)
	}
	return rd.get(ctx, coll.Members[0].ID)
}

// get reads one resource. path is a link the BMC answered (the anonymous
// service root names the managers and systems): it is followed only when
// it is a path on the BMC's own service, so a planted "@host/x" cannot
// send the credential elsewhere.
func (rd *redfishReader) get(ctx context.Context, path string) ([]byte, error) {
	if err := redfish.CheckLink(path); err != nil {
		return nil, bmc.LinkOffOrigin.At("bmc_detect").New("%s answered the link %q: %v; refused, nothing was sent there", rd.base, path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, rd.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rd.base+path, nil)
	if err != nil {
		return nil, inputErr("--url: %v", err)
	}
	if base, _ := url.Parse(rd.base); base == nil || req.URL.Host != base.Host || req.URL.User != nil {
		return nil, bmc.LinkOffOrigin.At("bmc_detect").New("%s answered the link %q, which leaves it; refused, nothing was sent there", rd.base, path)
	}
	req.Header.Set("Accept", "application/json")
	if rd.user != "" && path != "/redfish/v1/" {
		req.SetBasicAuth(rd.user, rd.password)
	}
	rd.reads = append(rd.reads, path)
	resp, err := rd.client.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		if u := redfish.Untrusted(rd.base, err); u != nil {
			if f, ok := hostforge.AsFailure(u); ok {
				f.Phase = "bmc_detect"
			}
			return nil, u
		}
		// url.Error repeats the method and the URL the message gives.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, bmc.Unreachable.At("bmc_detect").Wrap(err, "GET %s%s", rd.base, path)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, bmc.Unreachable.Wrap(err, "GET %s%s: reading the answer", rd.base, path)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, bmc.CredentialInvalid.New("GET %s%s: the BMC refused user %s (HTTP %d); check %s", rd.base, path, rd.user, resp.StatusCode, EnvBMCPassword)
	case resp.StatusCode == http.StatusNotFound:
		return nil, bmc.EndpointMissing.New("GET %s%s: HTTP 404", rd.base, path)
	case resp.StatusCode >= 300:
		return nil, bmc.Unreachable.New("GET %s%s: HTTP %d", rd.base, path, resp.StatusCode)
	}
	return body, nil
}
