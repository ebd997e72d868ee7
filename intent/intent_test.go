package intent_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/intent"
)

func TestNaturalLess(t *testing.T) {
	names := []string{"eth10", "eth2", "eth1", "swp1s10", "swp1s2", "eth02", "Ethernet1/4", "Ethernet1/10", "bond0", "eth"}
	sort.Slice(names, func(i, j int) bool { return intent.NaturalLess(names[i], names[j]) })
	want := "Ethernet1/4 Ethernet1/10 bond0 eth eth1 eth2 eth02 eth10 swp1s2 swp1s10"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("sorted = %s\nwant     %s", got, want)
	}
	if intent.NaturalLess("a", "a") {
		t.Fatal("a < a")
	}
}

func TestStatusAndTags(t *testing.T) {
	if !intent.StatusStaged.Known() || intent.Status("borked").Known() {
		t.Fatal("Known is wrong")
	}
	d := intent.Device{Tags: []string{"ironic"}, Interfaces: []intent.Interface{{Name: "eth0", MAC: "aa"}}}
	if !d.HasTag("ironic") || d.HasTag("ipmi_exporter") {
		t.Fatal("HasTag is wrong")
	}
	if i, ok := d.Interface("eth0"); !ok || i.MAC != "aa" {
		t.Fatal("Interface(eth0) not found")
	}
	if _, ok := d.Interface("eth9"); ok {
		t.Fatal("Interface(eth9) found")
	}
}
