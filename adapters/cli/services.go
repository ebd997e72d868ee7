package cli

import (
	"path/filepath"
	"sort"

	"github.com/hostforge/hostforge/adapters/lab"
)

// The commands that serve until interrupted (lab, worker, extensions
// listen, firmware run) print, with -o json, one JSON document once they
// are up — where they listen, what they serve — and nothing more on the
// standard output: a script reads it to learn the addresses, and the
// progress lines of the text form are left out.

// labJSON is 'hostforge lab -o json', printed once the rack is served.
type labJSON struct {
	Dir string `json:"dir"`
	// Config is lab.yaml, HostsFile the file listing the rack.
	Config    string   `json:"config"`
	HostsFile string   `json:"hosts_file"`
	Hosts     []string `json:"hosts"`
	NetBoxURL string   `json:"netbox_url"`
	// BMCs are the emulators by host, in host order.
	BMCs    []labBMCJSON `json:"bmcs"`
	DHCPSSH string       `json:"dhcp_ssh"`
	Ledger  string       `json:"ledger"`
	// IronicURL and InspectorURL are "" when lab.yaml enrols without them.
	IronicURL    string `json:"ironic_url"`
	InspectorURL string `json:"inspector_url"`
}

// labBMCJSON is one BMC emulator of the lab.
type labBMCJSON struct {
	Host     string `json:"host"`
	Vendor   string `json:"vendor"`
	Address  string `json:"address"`
	Endpoint string `json:"endpoint"`
}

func labDocument(l *lab.Lab, ironicURL, inspectorURL string) labJSON {
	j := labJSON{Dir: l.Dir, Config: l.Config, HostsFile: filepath.Join(l.Dir, lab.HostsFile), Hosts: l.Hosts, NetBoxURL: l.NetBoxURL,
		BMCs: []labBMCJSON{}, DHCPSSH: l.SSHAddr, Ledger: filepath.Join(l.Dir, lab.LedgerFile)}
	if l.Ironic {
		j.IronicURL, j.InspectorURL = ironicURL, inspectorURL
	}
	hosts := make([]string, 0, len(l.BMCs))
	for h := range l.BMCs {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		b := l.BMCs[h]
		j.BMCs = append(j.BMCs, labBMCJSON{Host: h, Vendor: b.Emulator.Vendor(), Address: b.Address, Endpoint: b.Endpoint})
	}
	return j
}

// workerJSON is 'hostforge worker -o json', printed once the worker polls
// its task queue.
type workerJSON struct {
	Temporal  string `json:"temporal"`
	Namespace string `json:"namespace"`
	TaskQueue string `json:"task_queue"`
	Site      string `json:"site"`
	// MetricsListen is --metrics-listen ("" without metrics).
	MetricsListen string `json:"metrics_listen"`
}

// listenJSON is 'hostforge extensions listen -o json', printed once the
// endpoint listens.
type listenJSON struct {
	Site string `json:"site"`
	// Endpoint is the address NetBox's event rules post to
	// (https://ADDRESS/netbox/events).
	Endpoint string `json:"endpoint"`
}

// firmwareRunJSON is 'hostforge firmware run -o json', printed once its
// servers listen.
type firmwareRunJSON struct {
	// Interval is the update manager's cycle, in seconds.
	IntervalSeconds float64 `json:"interval_seconds"`
	// MetricsURL and AgentURL are "" when not served.
	MetricsURL string `json:"metrics_url"`
	AgentURL   string `json:"agent_url"`
}
