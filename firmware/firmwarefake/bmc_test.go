package firmwarefake_test

import (
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/firmware/firmwaretest"
)

// The fake BMC client passes the same contract as the Redfish adapter
// against the emulator.
func TestBMCsContract(t *testing.T) {
	firmwaretest.RunBMC(t, func(t *testing.T) firmwaretest.BMCHarness {
		clk := clock.NewFake(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
		b, fb := firmwarefake.Harness(clk, firmwaretest.DellMembers)
		return firmwaretest.BMCHarness{Client: b, Machine: "m1", FW: fb, Clock: clk,
			Artifact: func(_ *testing.T, name string, img fakes.FirmwareImage) firmware.UploadRequest {
				key := "/srv/firmware/" + name
				if img.Version != "" || img.Targets != nil {
					fb.AddImage(key, img)
				}
				return firmware.UploadRequest{Artifact: firmware.Artifact{Filename: key}, Count: 1}
			}}
	})
}
