package lab_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/wiring"
)

// Start serves the demo rack on loopback and writes lab.yaml, which every
// hostforge command and the worker read through the wiring.
func ExampleStart() {
	dir, _ := os.MkdirTemp("", "lab-example")
	defer os.RemoveAll(dir)
	l, err := lab.Start(context.Background(), lab.Options{Dir: filepath.Join(dir, "lab")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	cfg, err := wiring.Load(l.Config)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(l.Hosts), "hosts,", len(l.BMCs), "BMC emulators, Ironic gate:", cfg.Gates.IronicEnrol)
	// Output: 13 hosts, 13 BMC emulators, Ironic gate: false
}
