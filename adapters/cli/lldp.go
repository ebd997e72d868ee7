package cli

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/verify"
)

// lldpJSON is one interface in 'lldp decode -o json'.
type lldpJSON struct {
	Interface       string        `json:"interface"`
	MAC             string        `json:"mac,omitempty"`
	Collected       bool          `json:"collected"`
	Source          string        `json:"source,omitempty"`
	SwitchName      string        `json:"switch_name,omitempty"`
	ChassisID       string        `json:"chassis_id,omitempty"`
	PortID          string        `json:"port_id,omitempty"`
	PortDescription string        `json:"port_description,omitempty"`
	PVID            *int          `json:"pvid,omitempty"`
	VLANs           []verify.VLAN `json:"vlans,omitempty"`
	Problems        []string      `json:"problems,omitempty"`
	// Neighbour is everything decoded, for tools that want more.
	Neighbour *verify.LLDP `json:"neighbour,omitempty"`
}

func (a *app) lldpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lldp",
		Short: "LLDP tools",
		Args:  cobra.NoArgs,
		Example: `  hostforge lldp decode --inventory node-inventory.json
  hostforge lldp decode --inventory - -o json < introspection-data.json`,
		RunE: func(cmd *cobra.Command, _ []string) error { return usageErr(fmt.Errorf("missing subcommand: decode")) },
	}
	var inventory string
	dec := &cobra.Command{
		Use:   "decode --inventory FILE",
		Short: "Show the LLDP neighbour each interface of a saved inventory heard",
		Long: `Decode the LLDP each interface of a saved inventory heard (raw TLVs in the
inventory or plugin_data.lldp_raw, else the processed switch_* keys): the
switch's system name, chassis ID, port ID, port description and VLANs.
Malformed TLVs are reported under the interface and never stop the decoding.
An interface without LLDP data says whether LLDP was collected at all
(ipa-collect-lldp=1) or collected and nothing was heard.

` + exitCodes(ExitOK, ExitUsage, ExitBug),
		Example: `  hostforge lldp decode --inventory node-inventory.json
  hostforge lldp decode --inventory - -o json < introspection-data.json`,
		Args: cobra.NoArgs,
	}
	dec.Flags().StringVar(&inventory, "inventory", "", "inventory file (Ironic or ironic-inspector JSON), - for standard input")
	_ = dec.MarkFlagRequired("inventory")
	logLevelFlag(dec)
	out := outputFlag(dec)
	dec.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		inv, err := a.readInventory(inventory)
		if err != nil {
			return err
		}
		rows := make([]lldpJSON, 0, len(inv.Interfaces))
		for _, it := range inv.Interfaces {
			r := lldpJSON{Interface: it.Name, MAC: it.MAC, Collected: it.LLDPCollected, Source: it.LLDPSource}
			if n := it.LLDP; n != nil {
				r.SwitchName, r.PortID, r.PortDescription = n.Name(), n.Port(), n.Description()
				if n.ChassisID != nil {
					r.ChassisID = n.ChassisID.String()
				}
				r.PVID, r.VLANs, r.Problems, r.Neighbour = n.PVID, n.VLANs, n.Problems, n
			}
			rows = append(rows, r)
		}
		w := cmd.OutOrStdout()
		if *out == formatJSON {
			return writeJSON(w, rows)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "INTERFACE\tMAC\tSWITCH\tCHASSIS ID\tPORT ID\tPORT DESCRIPTION\tVLANS")
		for _, r := range rows {
			if r.Neighbour == nil {
				what := "(nothing heard)"
				if !r.Collected {
					what = "(LLDP not collected)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\n", r.Interface, dash(r.MAC), what)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Interface, dash(r.MAC), dash(r.SwitchName), dash(r.ChassisID),
				dash(r.PortID), dash(r.PortDescription), vlanList(r.PVID, r.VLANs))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, r := range rows {
			for _, p := range r.Problems {
				fmt.Fprintf(w, "warning: %s: %s\n", r.Interface, p)
			}
		}
		return nil
	}
	cmd.AddCommand(dec)
	return cmd
}

// vlanList renders "100 (prod), 200 (storage); pvid 100".
func vlanList(pvid *int, vlans []verify.VLAN) string {
	parts := make([]string, 0, len(vlans))
	for _, v := range vlans {
		s := strconv.Itoa(v.ID)
		if v.Name != "" {
			s += " (" + v.Name + ")"
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, ", ")
	if pvid != nil {
		if s != "" {
			s += "; "
		}
		s += "pvid " + strconv.Itoa(*pvid)
	}
	return dash(s)
}
