package platformclass_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/platformclass"
)

func TestResolve(t *testing.T) {
	ib := map[string]any{"infiniband": map[string]any{"fabric": "ndr"}}
	tests := []struct {
		name    string
		in      platformclass.Inputs
		want    string
		wantErr string // substring of the failure message; "" means success
	}{
		{"GPUTYPE from gpu_type, DEVICETYPE squashed (spec example Lenovo HG635N V2), IB fabric",
			platformclass.Inputs{DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300", HasZTP: true, ZTP: ib},
			"GB300_LENOVOHG635NV2_IB_01", ""},
		{"GPU device without ztp block is NORDMA",
			platformclass.Inputs{DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "Dell", Model: "PowerEdge XE9680", GPUType: "H100"},
			"H100_DELLPOWEREDGEXE9680_NORDMA_01", ""},
		{"GPU device with empty ztp block {} fails: fabric cannot be guessed",
			platformclass.Inputs{Device: "gpu-7", DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "Dell", Model: "XE9680", GPUType: "H100", HasZTP: true, ZTP: map[string]any{}},
			"", "no infiniband section"},
		{"GPU device with ztp block without infiniband fails",
			platformclass.Inputs{DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "Dell", Model: "XE9680", GPUType: "H100", HasZTP: true, ZTP: map[string]any{"roce": true}},
			"", "no infiniband section"},
		{"GPU device with null ztp is a present block of the wrong type",
			platformclass.Inputs{DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "Dell", Model: "XE9680", GPUType: "H100", HasZTP: true, ZTP: nil},
			"", "is a null"},
		{"GPU device with a ztp list fails",
			platformclass.Inputs{DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "Dell", Model: "XE9680", GPUType: "H100", HasZTP: true, ZTP: []any{"infiniband"}},
			"", "is a list"},
		{"GPU compute device without gpu_type fails",
			platformclass.Inputs{Device: "gpu-1", DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "Dell", Model: "XE9680"},
			"", "GPU compute device needs"},
		{"CPU baremetal with empty gpu_type resolves NOGPU",
			platformclass.Inputs{DeviceClass: platformclass.ClassCPUBaremetal, Manufacturer: "Dell", Model: "PowerEdge R7615"},
			"NOGPU_DELLPOWEREDGER7615_NORDMA_01", ""},
		{"hypervisor with empty gpu_type resolves NOGPU",
			platformclass.Inputs{DeviceClass: platformclass.ClassHypervisor, Manufacturer: "Super Micro", Model: "SYS-821GE-TNHR"},
			"NOGPU_SUPERMICROSYS821GETNHR_NORDMA_01", ""},
		{"NOGPU device never reads ztp: a broken ztp block is ignored and fabric is NORDMA",
			platformclass.Inputs{DeviceClass: platformclass.ClassCPUBaremetal, Manufacturer: "Dell", Model: "R7615", HasZTP: true, ZTP: map[string]any{}},
			"NOGPU_DELLR7615_NORDMA_01", ""},
		{"NOGPU device with infiniband ztp is still NORDMA",
			platformclass.Inputs{DeviceClass: platformclass.ClassHypervisor, Manufacturer: "Dell", Model: "R7615", HasZTP: true, ZTP: ib},
			"NOGPU_DELLR7615_NORDMA_01", ""},
		{"whitespace-only gpu_type counts as empty",
			platformclass.Inputs{DeviceClass: platformclass.ClassCPUBaremetal, Manufacturer: "Dell", Model: "R7615", GPUType: "  "},
			"NOGPU_DELLR7615_NORDMA_01", ""},
		{"gpu_type is squashed like the device type",
			platformclass.Inputs{DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "NVIDIA", Model: "DGX H100", GPUType: "h100-sxm"},
			"H100SXM_NVIDIADGXH100_NORDMA_01", ""},
		{"gpu_type with no letters or digits fails",
			platformclass.Inputs{DeviceClass: platformclass.ClassGPUCompute, Manufacturer: "NVIDIA", Model: "DGX", GPUType: "--"},
			"", "no letters or digits"},
		{"unknown device class with empty gpu_type fails rather than guessing NOGPU",
			platformclass.Inputs{DeviceClass: "STORAGE", Manufacturer: "Dell", Model: "R7615"},
			"", "neither CPU baremetal nor hypervisor"},
		{"non-ASCII letters are stripped",
			platformclass.Inputs{DeviceClass: platformclass.ClassCPUBaremetal, Manufacturer: "Défense", Model: "X1"},
			"NOGPU_DFENSEX1_NORDMA_01", ""},
		{"empty DEVICETYPE fails",
			platformclass.Inputs{DeviceClass: platformclass.ClassCPUBaremetal, Manufacturer: "---", Model: "R1"},
			"", "empty DEVICETYPE"},
		{"a key of exactly 128 characters is accepted",
			platformclass.Inputs{DeviceClass: platformclass.ClassCPUBaremetal, Manufacturer: "M", Model: strings.Repeat("A", 128-len("NOGPU_M_NORDMA_01"))},
			"NOGPU_M" + strings.Repeat("A", 128-len("NOGPU_M_NORDMA_01")) + "_NORDMA_01", ""},
		{"a key longer than 128 characters is unresolvable",
			platformclass.Inputs{DeviceClass: platformclass.ClassCPUBaremetal, Manufacturer: "M", Model: strings.Repeat("A", 129-len("NOGPU_M_NORDMA_01"))},
			"", "longer than 128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := platformclass.Resolve(tt.in)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != "PLATFORM_CLASS_UNRESOLVABLE" || f.Retryable || f.Owner != hostforge.OwnerInfraEng || f.Action == "" {
				t.Fatalf("Resolve error = %v; want a non-retryable INFRA_ENG PLATFORM_CLASS_UNRESOLVABLE", err)
			}
			if !strings.Contains(f.Message, tt.wantErr) {
				t.Fatalf("message %q does not say %q", f.Message, tt.wantErr)
			}
			if got != "" {
				t.Fatalf("Resolve returned key %q with a failure", got)
			}
		})
	}
}

// fakeStores records writes and can fail.
type fakeStores struct {
	nbWrites, fmWrites []string
	fmValue            string
	nbErr, fmGetErr    error
	fmSetErr           error
}

func (f *fakeStores) SetPlatformClass(_ context.Context, id int, v string) error {
	if f.nbErr != nil {
		return f.nbErr
	}
	f.nbWrites = append(f.nbWrites, fmt.Sprintf("%d=%s", id, v))
	return nil
}

type fleet struct{ *fakeStores }

func (f fleet) PlatformClass(context.Context, string) (string, error) { return f.fmValue, f.fmGetErr }
func (f fleet) SetPlatformClass(_ context.Context, d, v string) error {
	if f.fmSetErr != nil {
		return f.fmSetErr
	}
	f.fmWrites = append(f.fmWrites, d+"="+v)
	f.fmValue = v
	return nil
}

func TestRecordWritePolicy(t *testing.T) {
	const key = "GB300_LENOVOHG635NV2_IB_01"
	tests := []struct {
		name            string
		netbox, fleetV  string
		dryRun          bool
		wantNB, wantFM  []string
		wantEffective   string
		wantDivergent   bool
		wantWarningLogs bool
	}{
		{"NetBox empty: PATCH the computed key, and set the fleet manager", "", "", false, []string{"7=" + key}, []string{"h=" + key}, key, false, false},
		{"NetBox equal, fleet equal: no writes at all", key, key, false, nil, nil, key, false, false},
		{"NetBox equal, fleet stale: only the fleet manager is set", key, "OLD", false, nil, []string{"h=" + key}, key, false, false},
		{"NetBox different: NetBox kept, warning logged, fleet set to NetBox's value", "H100_OLD_IB_01", "", false, nil, []string{"h=H100_OLD_IB_01"}, "H100_OLD_IB_01", true, true},
		{"NetBox different and fleet already equal to it: no writes", "H100_OLD_IB_01", "H100_OLD_IB_01", false, nil, nil, "H100_OLD_IB_01", true, true},
		{"dry run reports the writes but makes none", "", "", true, nil, nil, key, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeStores{fmValue: tt.fleetV}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			r, err := platformclass.Record(context.Background(), st, fleet{st}, platformclass.Target{DeviceID: 7, Device: "h", NetBoxValue: tt.netbox}, key, tt.dryRun, log)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(st.nbWrites) != fmt.Sprint(tt.wantNB) || fmt.Sprint(st.fmWrites) != fmt.Sprint(tt.wantFM) {
				t.Fatalf("writes netbox=%v fleet=%v, want %v %v", st.nbWrites, st.fmWrites, tt.wantNB, tt.wantFM)
			}
			if r.Effective != tt.wantEffective || r.Divergent != tt.wantDivergent || r.Computed != key {
				t.Fatalf("result %+v", r)
			}
			if tt.dryRun && (!r.NetBoxWrite || !r.FleetWrite) {
				t.Fatalf("dry run did not report the writes it would make: %+v", r)
			}
			if got := strings.Contains(logs.String(), "level=WARN"); got != tt.wantWarningLogs {
				t.Fatalf("warning logged = %v, want %v: %s", got, tt.wantWarningLogs, logs.String())
			}
		})
	}
}

func TestRecordKeptValueLongerThan128IsUnresolvable(t *testing.T) {
	st := &fakeStores{}
	long := strings.Repeat("X", 129)
	_, err := platformclass.Record(context.Background(), st, fleet{st}, platformclass.Target{DeviceID: 1, Device: "h", NetBoxValue: long}, "K_01", false, nil)
	if !platformclass.Unresolvable.Is(err) {
		t.Fatalf("err = %v", err)
	}
	if len(st.nbWrites)+len(st.fmWrites) != 0 {
		t.Fatal("wrote despite the failure")
	}
}

func TestRecordErrorsAreRecordFailed(t *testing.T) {
	boom := fmt.Errorf("503: %w", hostforge.ErrUnavailable)
	tests := []struct {
		name string
		st   *fakeStores
	}{
		{"fleet read fails", &fakeStores{fmGetErr: boom}},
		{"NetBox write fails (custom field missing)", &fakeStores{nbErr: fmt.Errorf("custom field platform_class: %w", hostforge.ErrInvalid)}},
		{"fleet write fails", &fakeStores{fmSetErr: boom}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := platformclass.Record(context.Background(), tt.st, fleet{tt.st}, platformclass.Target{DeviceID: 1, Device: "h"}, "K_01", false, nil)
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != "PLATFORM_CLASS_RECORD_FAILED" || !f.Retryable || f.Owner != hostforge.OwnerFleetManager {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(f.Action, "custom field exists") {
				t.Fatalf("action does not point at the custom field: %q", f.Action)
			}
		})
	}
}

func TestRecordPassesThroughFailuresAndCancellation(t *testing.T) {
	own := platformclass.Unresolvable.New("x")
	st := &fakeStores{fmGetErr: own}
	if _, err := platformclass.Record(context.Background(), st, fleet{st}, platformclass.Target{Device: "h"}, "K", false, nil); !errors.Is(err, own) {
		t.Fatalf("err = %v", err)
	}
	st = &fakeStores{fmGetErr: context.Canceled}
	if _, err := platformclass.Record(context.Background(), st, fleet{st}, platformclass.Target{Device: "h"}, "K", false, nil); !errors.Is(err, context.Canceled) || hostforge.CodeOf(err) != "" {
		t.Fatalf("err = %v", err)
	}
	// A fleet manager that does not know the device yet is an empty value, not an error.
	st = &fakeStores{fmGetErr: hostforge.ErrNotFound}
	if r, err := platformclass.Record(context.Background(), st, fleet{st}, platformclass.Target{Device: "h", NetBoxValue: "K"}, "K", true, nil); err != nil || !r.FleetWrite {
		t.Fatalf("r = %+v, err = %v", r, err)
	}
}

func ExampleResolve() {
	key, err := platformclass.Resolve(platformclass.Inputs{
		Device:       "gpu-rack1-u12",
		DeviceClass:  platformclass.ClassGPUCompute,
		Manufacturer: "Lenovo",
		Model:        "HG635N V2",
		GPUType:      "GB300",
		HasZTP:       true,
		ZTP:          map[string]any{"infiniband": map[string]any{}},
	})
	fmt.Println(key, err)
	// Output: GB300_LENOVOHG635NV2_IB_01 <nil>
}

func TestHasPlatformClass(t *testing.T) {
	for class, want := range map[string]bool{
		platformclass.ClassGPUCompute: true, platformclass.ClassCPUBaremetal: true, platformclass.ClassHypervisor: true,
		"SWITCH": false, "": false, "STORAGE": false,
	} {
		if got := platformclass.HasPlatformClass(class); got != want {
			t.Errorf("HasPlatformClass(%q) = %v, want %v", class, got, want)
		}
	}
}
