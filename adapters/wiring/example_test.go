package wiring_test

import (
	"fmt"

	"github.com/hostforge/hostforge/adapters/wiring"
)

// Parse checks a config file and maps it onto the workflow's site
// configuration; Open would then connect the systems it names.
func ExampleParse() {
	cfg, err := wiring.Parse("lab1.yaml", []byte(`site: lab1
netbox:
  url: https://netbox.example.net
  token_env: LAB1_NETBOX_TOKEN
ironic:
  - name: ironic-cpu
    url: https://ironic-cpu.example.net:6385
    device_classes: [CPU_BAREMETAL, HYPERVISOR]
    timing: {link_budget: 2m}
gates:
  enrollment_ironic_enrol: true
vault:
  kind: file
  path: /etc/hostforge/vault.yaml
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	sc := cfg.SiteConfig()
	fmt.Println(sc.IronicInstances["HYPERVISOR"], cfg.Ironic[0].Timing.Phases().LinkBudget)

	_, err = wiring.Parse("lab1.yaml", []byte("site: lab1\nnetbox: {url: netbox.example.net}\n"))
	fmt.Println(err)
	// Output:
	// ironic-cpu 2m0s
	// CONFIG_INVALID (config): lab1.yaml: line 2: netbox.url: "netbox.example.net" is not an http(s) URL
}
