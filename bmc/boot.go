package bmc

import (
	"context"
	"slices"
	"strings"

	"github.com/hostforge/hostforge"
)

// OptionKind is what a boot option boots from.
type OptionKind string

// Boot option kinds. Only NIC options are ever disabled.
const (
	KindNIC   OptionKind = "nic"
	KindOther OptionKind = "other" // disk, virtual media, shell, vendor entries
)

// Kind classifies a boot option from its UEFI device path, then its label.
func Kind(o BootOption) OptionKind {
	p := strings.ToUpper(o.UefiDevicePath)
	for _, n := range []string{"MAC(", "IPV4(", "IPV6(", "URI("} {
		if strings.Contains(p, n) {
			return KindNIC
		}
	}
	if strings.Contains(p, "HD(") || strings.Contains(p, "NVME(") || strings.Contains(p, "SATA(") || strings.Contains(p, "SCSI(") || strings.Contains(p, "USB(") {
		return KindOther
	}
	l := strings.ToLower(o.DisplayName)
	for _, n := range []string{"pxe", "http device", "network", "nic in", "nic.", "ipv4", "ipv6"} {
		if strings.Contains(l, n) {
			return KindNIC
		}
	}
	return KindOther
}

// macHex is a MAC as UEFI device paths print it: 12 upper-case hex digits.
func macHex(mac string) string {
	m, ok := hostforge.NormalizeMAC(mac)
	if !ok {
		return ""
	}
	return strings.ToUpper(strings.ReplaceAll(m, ":", ""))
}

// MatchesMAC reports whether the option's UEFI device path names the MAC,
// as in ".../MAC(B83FD29097C4,0x1)/IPv4(...)".
func MatchesMAC(o BootOption, mac string) bool {
	h := macHex(mac)
	return h != "" && strings.Contains(strings.ToUpper(o.UefiDevicePath), "MAC("+h+",")
}

// Restriction is the boot restriction computed for one host.
type Restriction struct {
	// Identified is true when at least one boot option positively matches
	// the provisioning NIC's MAC. When false, nothing is to be disabled.
	Identified bool
	// Keep are the provisioning NIC's options (IPv4, IPv6, HTTP), promoted
	// to the front of the boot order.
	Keep []string
	// Disable are the other NIC options currently enabled.
	Disable []string
	// Enable are provisioning NIC options currently disabled.
	Enable []string
}

// PlanRestriction computes the restriction. It fails closed: without a
// positive match it returns Identified=false and nothing to change. Disk,
// virtual media and shell options are never touched.
func PlanRestriction(opts []BootOption, provisioningMAC string) Restriction {
	var r Restriction
	if provisioningMAC == "" {
		return r
	}
	for _, o := range opts {
		if MatchesMAC(o, provisioningMAC) {
			r.Keep = append(r.Keep, o.ID)
		}
	}
	if len(r.Keep) == 0 {
		return Restriction{}
	}
	r.Identified = true
	for _, o := range opts {
		keep := slices.Contains(r.Keep, o.ID)
		switch {
		case keep && o.Enabled != nil && !*o.Enabled:
			r.Enable = append(r.Enable, o.ID)
		case !keep && Kind(o) == KindNIC && (o.Enabled == nil || *o.Enabled):
			r.Disable = append(r.Disable, o.ID)
		}
	}
	return r
}

// Promote returns order with first moved to the front (in first's order),
// everything else after it in its current relative order.
func Promote(order, first []string) []string {
	out := append([]string(nil), first...)
	for _, id := range order {
		if !slices.Contains(first, id) {
			out = append(out, id)
		}
	}
	return out
}

// LabelOrder is the label-based reorder: NIC options first, then the rest,
// each group in its current relative order. Nothing is disabled.
func LabelOrder(order []string, opts []BootOption) []string {
	byID := map[string]BootOption{}
	for _, o := range opts {
		byID[o.ID] = o
	}
	var nics []string
	for _, id := range order {
		if o, ok := byID[id]; ok && Kind(o) == KindNIC {
			nics = append(nics, id)
		}
	}
	return Promote(order, nics)
}

func (r *run) bootState(ctx context.Context) (opts []BootOption, cur, pend []string, err error) {
	if err = r.read(ctx, "read boot options", func() (err error) { opts, err = r.cl.BootOptions(ctx); return err }); err != nil {
		return
	}
	err = r.read(ctx, "read boot order", func() (err error) { cur, pend, err = r.cl.BootOrder(ctx); return err })
	return
}

// applyEnabled writes BootOptionEnabled for the restriction.
func (r *run) applyEnabled(ctx context.Context, step string, rs Restriction, opts []BootOption) error {
	for _, id := range rs.Enable {
		if err := r.write(ctx, step+": enable "+id, func() error { return r.cl.SetBootOptionEnabled(ctx, id, true) }); err != nil {
			return err
		}
	}
	byID := map[string]BootOption{}
	for _, o := range opts {
		byID[o.ID] = o
	}
	for _, id := range rs.Disable {
		if byID[id].Enabled == nil {
			r.log.Warn("boot option has no BootOptionEnabled; left enabled", "step", step, "option", id)
			continue
		}
		if err := r.write(ctx, step+": disable "+id, func() error { return r.cl.SetBootOptionEnabled(ctx, id, false) }); err != nil {
			return err
		}
	}
	return nil
}

// amiBoot is AMI's boot restriction; AMI has no separate reorder, so with
// restrict_boot off it skips boot configuration entirely.
func (r *run) amiBoot(ctx context.Context) (string, error) {
	if !r.t.RestrictBoot {
		return outSkipped + "_restrict_boot_off", nil
	}
	if r.t.ProvisioningMAC == "" {
		r.log.Warn("no provisioning NIC known; boot left unrestricted", "step", "boot_restriction")
		return "not_identified", nil
	}
	opts, cur, _, err := r.bootState(ctx)
	if err != nil {
		return "", err
	}
	rs := PlanRestriction(opts, r.t.ProvisioningMAC)
	if !rs.Identified {
		r.log.Warn("provisioning NIC's boot option not identified; nothing disabled", "step", "boot_restriction", "mac", r.t.ProvisioningMAC)
		return "not_identified", nil
	}
	before := r.res.Writes
	if err := r.applyEnabled(ctx, "boot_restriction", rs, opts); err != nil {
		return "", err
	}
	if want := Promote(cur, rs.Keep); !slices.Equal(cur, want) {
		if err := r.write(ctx, "boot_restriction: order", func() error { _, err := r.cl.SetBootOrder(ctx, want); return err }); err != nil {
			return "", err
		}
	}
	if r.res.Writes == before {
		return outOK, nil
	}
	return "restricted", nil
}

// lenovoBoot is the label-based reorder, staged for the next boot.
func (r *run) lenovoBoot(ctx context.Context) (string, error) {
	opts, cur, pend, err := r.bootState(ctx)
	if err != nil {
		return "", err
	}
	want := LabelOrder(cur, opts)
	switch {
	case slices.Equal(cur, want):
		return outOK, nil
	case slices.Equal(pend, want):
		r.hostResetNeeded = true
		return "staged", nil
	}
	r.hostResetNeeded = true
	return outSet, r.write(ctx, "boot_order", func() error { _, err := r.cl.SetBootOrder(ctx, want); return err })
}

// idracBoot is the boot restriction when the provisioning NIC is known and
// restrict_boot is set, else the label-based reorder; the order is staged as
// an OnReset job.
func (r *run) idracBoot(ctx context.Context) (string, error) {
	opts, cur, pend, err := r.bootState(ctx)
	if err != nil {
		return "", err
	}
	mode := "label_reorder"
	want := r.idracWantOrder(opts, cur)
	if r.t.RestrictBoot && r.t.ProvisioningMAC != "" {
		rs := PlanRestriction(opts, r.t.ProvisioningMAC)
		if rs.Identified {
			mode = "restricted"
			if len(rs.Enable)+len(rs.Disable) > 0 {
				if err := r.runningJobBlocks(ctx, "boot_order"); err != nil {
					return "", err
				}
				if err := r.applyEnabled(ctx, "boot_order", rs, opts); err != nil {
					return "", err
				}
			}
		} else {
			mode = "not_identified/label_reorder"
			r.log.Warn("provisioning NIC's boot option not identified; nothing disabled, label reorder", "step", "boot_order", "mac", r.t.ProvisioningMAC)
		}
	}
	var out string
	if slices.Equal(cur, want) {
		out, err = r.jobSettled(ctx, "boot_order", outOK)
	} else {
		stage := func() (string, error) {
			var id string
			err := r.write(ctx, "boot_order", func() (err error) { id, err = r.cl.SetBootOrder(ctx, want); return err })
			return id, err
		}
		converged := func() (bool, error) {
			opts, cur, _, err := r.bootState(ctx)
			return err == nil && slices.Equal(cur, r.idracWantOrder(opts, cur)), err
		}
		out, err = r.idracJob(ctx, "boot_order", !slices.Equal(pend, want), stage, converged)
	}
	if err != nil {
		return "", err
	}
	return mode + "/" + out, nil
}

// idracWantOrder is the boot order iDRAC should have: the provisioning
// NIC's options promoted when the restriction applies and identifies them,
// the label reorder otherwise.
func (r *run) idracWantOrder(opts []BootOption, cur []string) []string {
	if r.t.RestrictBoot && r.t.ProvisioningMAC != "" {
		if rs := PlanRestriction(opts, r.t.ProvisioningMAC); rs.Identified {
			return Promote(cur, rs.Keep)
		}
	}
	return LabelOrder(cur, opts)
}
