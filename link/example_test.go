package link_test

import (
	"fmt"
	"time"

	"github.com/hostforge/hostforge/link"
)

// The link guard: all ports DOWN keeps waiting until the budget has passed.
func ExampleDecide() {
	poweredOn := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	down := map[string]link.State{"eth0": link.Down, "eth1": link.Down}
	samples := []link.Sample{{At: poweredOn.Add(time.Minute), Ports: down}}
	fmt.Println(link.Decide(poweredOn, 5*time.Minute, samples))
	samples = append(samples, link.Sample{At: poweredOn.Add(5 * time.Minute), Ports: down})
	fmt.Println(link.Decide(poweredOn, 5*time.Minute, samples), link.DownPorts(poweredOn, samples))
	samples[1].Ports = map[string]link.State{"eth0": link.Down, "eth1": link.Unknown}
	fmt.Println(link.Decide(poweredOn, 5*time.Minute, samples))
	// Output:
	// wait
	// abort [eth0 eth1]
	// pass
}
