package cli_test

import (
	"context"
	"fmt"
	"os"

	"github.com/hostforge/hostforge/adapters/cli"
)

// Run executes the command tree in-process and returns the exit code, so a
// program (or a test) embeds the CLI without a subprocess.
func ExampleRun() {
	code := cli.Run(context.Background(),
		[]string{"platform-class", "resolve", "--manufacturer", "Dell", "--model", "PowerEdge R7615", "--device-class", "CPU_BAREMETAL"},
		cli.Streams{Out: os.Stdout, Err: os.Stdout}, os.LookupEnv)
	fmt.Println("exit", code)

	code = cli.Run(context.Background(),
		[]string{"platform-class", "resolve", "--manufacturer", "Dell", "--model", "PowerEdge XE9680", "--device-class", "GPU_COMPUTE", "--device", "bad-nogputype-u20"},
		cli.Streams{Out: os.Stdout, Err: os.Stdout}, os.LookupEnv)
	fmt.Println("exit", code)
	// Output:
	// NOGPU_DELLPOWEREDGER7615_NORDMA_01
	// exit 0
	// error: PLATFORM_CLASS_UNRESOLVABLE (record_platform_class): device bad-nogputype-u20: device type Dell PowerEdge XE9680 has no custom_fields.gpu_type, which a GPU compute device needs
	// action: Fix the NetBox data the message names — custom_fields.gpu_type, or the manufacturer and model, on the device type; the device's config_context ztp block; or a platform_class longer than the fleet manager takes — then rerun the enrollment (or the platform-class backfill).
	// exit 4
}

// The demo rack enrols in-process on virtual time; -o json prints one
// result per host.
func ExampleRun_enrollDemo() {
	code := cli.Run(context.Background(),
		[]string{"enroll", "--demo", "--log-level", "off", "-o", "json", "bad-switch-u17"},
		cli.Streams{Out: os.Stdout}, nil)
	fmt.Println("exit", code)
	// Output:
	// {"device":"bad-switch-u17","enrolled":false,"elapsed_seconds":0,"phases":[{"phase":"resolve_ironic_instance","status":"failed"}],"failure":{"code":"IRONIC_ROUTING_UNRESOLVED","phase":"resolve_ironic_instance","owner":"INFRA_ENG","retryable":false,"message":"device bad-switch-u17: no Ironic instance manages device_class \"SWITCH\"","action":"Fix the device role in NetBox so it carries a device_class an Ironic instance manages, or dispatch a workflow that supports this device class, then rerun. Nothing was touched."},"exit_code":4}
	// exit 4
}
