package verify

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"
)

// LLDP TLV types (IEEE 802.1AB).
const (
	TLVEnd               = 0
	TLVChassisID         = 1
	TLVPortID            = 2
	TLVTTL               = 3
	TLVPortDescription   = 4
	TLVSystemName        = 5
	TLVSystemDescription = 6
	TLVCapabilities      = 7
	TLVManagementAddress = 8
	TLVOrgSpecific       = 127
)

// Organisationally unique identifiers of the org-specific TLVs decoded here.
var (
	oui8021 = [3]byte{0x00, 0x80, 0xc2} // IEEE 802.1
	oui8023 = [3]byte{0x00, 0x12, 0x0f} // IEEE 802.3
)

// maxTLVValue is the largest value a TLV header's 9-bit length can carry.
const maxTLVValue = 511

// TLV is one raw LLDP TLV. In JSON it is IPA's pair [type, "hex value"].
type TLV struct {
	Type  int
	Value []byte
}

// MarshalJSON renders IPA's [type, "hex"] pair.
func (t TLV) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]any{t.Type, hex.EncodeToString(t.Value)})
}

// UnmarshalJSON reads IPA's [type, "hex"] pair.
func (t *TLV) UnmarshalJSON(b []byte) error {
	tlv, err := parsePair(b)
	if err != nil {
		return err
	}
	*t = tlv
	return nil
}

// parsePair reads one [type, "hex"] pair.
func parsePair(b []byte) (TLV, error) {
	if t, ok := parsePairFast(b); ok {
		return t, nil
	}
	return parsePairJSON(b)
}

// parsePairJSON reads a pair with the JSON decoder.
func parsePairJSON(b []byte) (TLV, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return TLV{}, fmt.Errorf("LLDP TLV %s is not a [type, \"hex\"] pair", clip(string(b)))
	}
	var typ float64
	if err := json.Unmarshal(pair[0], &typ); err != nil || typ != float64(int(typ)) || typ < 0 || typ > 127 {
		return TLV{}, fmt.Errorf("LLDP TLV type %s is not a whole number 0-127", clip(string(pair[0])))
	}
	var h string
	if err := json.Unmarshal(pair[1], &h); err != nil {
		return TLV{}, fmt.Errorf("LLDP TLV %d value %s is not a hex string", int(typ), clip(string(pair[1])))
	}
	v, err := hex.DecodeString(h)
	if err != nil {
		return TLV{}, fmt.Errorf("LLDP TLV %d value %q is not hex", int(typ), clip(h))
	}
	return TLV{Type: int(typ), Value: v}, nil
}

// parsePairFast reads the shape IPA writes, [type, "hex"] with a type of
// at most three digits (no leading zero, at most 127) and an even run of
// hex digits, without the JSON decoder; ok is false for anything else,
// which parsePair reads (and words the problems of) with the decoder.
func parsePairFast(b []byte) (t TLV, ok bool) {
	i := 0
	skip := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	expect := func(c byte) bool {
		skip()
		if i < len(b) && b[i] == c {
			i++
			return true
		}
		return false
	}
	if !expect('[') {
		return TLV{}, false
	}
	skip()
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	digits := b[start:i]
	if len(digits) == 0 || len(digits) > 3 || len(digits) > 1 && digits[0] == '0' {
		return TLV{}, false
	}
	typ, _ := strconv.Atoi(string(digits))
	if typ > 127 || !expect(',') || !expect('"') {
		return TLV{}, false
	}
	end := bytes.IndexByte(b[i:], '"')
	if end < 0 {
		return TLV{}, false
	}
	hexits := b[i : i+end]
	i += end + 1
	if !expect(']') {
		return TLV{}, false
	}
	skip()
	if i != len(b) {
		return TLV{}, false
	}
	v := make([]byte, len(hexits)/2)
	if _, err := hex.Decode(v, hexits); err != nil { // odd length, an escape, not hex
		return TLV{}, false
	}
	return TLV{Type: typ, Value: v}, true
}

// ParseTLVPairs reads IPA's JSON list of [type, "hex"] pairs. A pair that is
// not well formed is skipped and described in problems; only a document that
// is not a JSON list is an error.
func ParseTLVPairs(b []byte) (tlvs []TLV, problems []string, err error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, nil, fmt.Errorf("LLDP data is not a JSON list of [type, \"hex\"] pairs: %w", err)
	}
	tlvs = make([]TLV, 0, len(raw))
	for _, r := range raw {
		t, err := parsePair(r)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		tlvs = append(tlvs, t)
	}
	return tlvs, problems, nil
}

// ParseLLDPDU splits a raw LLDPDU (the Ethernet payload: 7-bit type, 9-bit
// length, value) into TLVs. A truncated TLV ends the list with an error; the
// TLVs before it are returned.
func ParseLLDPDU(b []byte) ([]TLV, error) {
	var out []TLV
	for len(b) > 0 {
		if len(b) < 2 {
			return out, fmt.Errorf("LLDPDU: %d stray byte(s) after the last TLV", len(b))
		}
		h := binary.BigEndian.Uint16(b)
		typ, n := int(h>>9), int(h&0x1ff)
		if len(b)-2 < n {
			return out, fmt.Errorf("LLDPDU: TLV %d claims %d bytes, %d remain", typ, n, len(b)-2)
		}
		out = append(out, TLV{Type: typ, Value: append([]byte(nil), b[2:2+n]...)})
		b = b[2+n:]
		if typ == TLVEnd {
			break
		}
	}
	return out, nil
}

// EncodeLLDPDU frames TLVs as an LLDPDU. A type above 127 or a value longer
// than 511 bytes cannot be framed.
func EncodeLLDPDU(tlvs []TLV) ([]byte, error) {
	var buf bytes.Buffer
	for _, t := range tlvs {
		if t.Type < 0 || t.Type > 127 || len(t.Value) > maxTLVValue {
			return nil, fmt.Errorf("LLDPDU: TLV type %d with %d bytes cannot be framed", t.Type, len(t.Value))
		}
		var h [2]byte
		binary.BigEndian.PutUint16(h[:], uint16(t.Type)<<9|uint16(len(t.Value)))
		buf.Write(h[:])
		buf.Write(t.Value)
	}
	return buf.Bytes(), nil
}

// ID is a chassis ID or port ID: a subtype and its bytes.
type ID struct {
	Subtype int
	Raw     []byte
}

// Chassis ID subtypes (802.1AB table 8-2).
var chassisSubtypes = map[int]string{
	1: "chassis component", 2: "interface alias", 3: "port component", 4: "mac address",
	5: "network address", 6: "interface name", 7: "locally assigned",
}

// Port ID subtypes (802.1AB table 8-3).
var portSubtypes = map[int]string{
	1: "interface alias", 2: "port component", 3: "mac address", 4: "network address",
	5: "interface name", 6: "agent circuit id", 7: "locally assigned",
}

// render shows an ID's bytes the way its subtype reads: a MAC, an address,
// or text (hex when not printable).
func (id ID) render(port bool) string {
	mac, network := 4, 5
	if port {
		mac, network = 3, 4
	}
	switch id.Subtype {
	case mac:
		if len(id.Raw) == 6 {
			return net.HardwareAddr(id.Raw).String()
		}
	case network:
		if s, ok := networkAddress(id.Raw); ok {
			return s
		}
	}
	return text(id.Raw)
}

// networkAddress renders an IANA address-family-prefixed address.
func networkAddress(b []byte) (string, bool) {
	if len(b) == 5 && b[0] == 1 || len(b) == 17 && b[0] == 2 {
		return net.IP(b[1:]).String(), true
	}
	return "", false
}

// text renders bytes as a string when they are printable UTF-8, else as hex.
func text(b []byte) string {
	if utf8.Valid(b) {
		printable := true
		for _, r := range string(b) {
			if r < 0x20 && r != '\t' || r == 0x7f {
				printable = false
				break
			}
		}
		if printable {
			return string(b)
		}
	}
	return "0x" + hex.EncodeToString(b)
}

// ChassisID is a chassis ID with its subtype name, for reports.
type ChassisID struct{ ID }

// String renders the chassis ID (a MAC, an address, or text).
func (c ChassisID) String() string { return c.render(false) }

// MarshalJSON renders {"subtype": 4, "type": "mac address", "value": "..."}.
func (c ChassisID) MarshalJSON() ([]byte, error) {
	return json.Marshal(idJSON{c.Subtype, subtypeName(chassisSubtypes, c.Subtype), c.String()})
}

// PortID is a port ID with its subtype name, for reports.
type PortID struct{ ID }

// String renders the port ID (an interface name, a MAC, an address, or text).
func (p PortID) String() string { return p.render(true) }

// MarshalJSON renders {"subtype": 5, "type": "interface name", "value": "..."}.
func (p PortID) MarshalJSON() ([]byte, error) {
	return json.Marshal(idJSON{p.Subtype, subtypeName(portSubtypes, p.Subtype), p.String()})
}

type idJSON struct {
	Subtype int    `json:"subtype"`
	Type    string `json:"type"`
	Value   string `json:"value"`
}

func subtypeName(m map[int]string, st int) string {
	if n, ok := m[st]; ok {
		return n
	}
	return "reserved " + strconv.Itoa(st)
}

// Capabilities is the system capabilities TLV.
type Capabilities struct {
	Supported uint16 `json:"-"`
	Enabled   uint16 `json:"-"`
}

var capabilityNames = []string{"Other", "Repeater", "Bridge", "WLAN access point", "Router",
	"Telephone", "DOCSIS cable device", "Station only", "C-VLAN component", "S-VLAN component", "TPMR"}

func capNames(bits uint16) []string {
	var out []string
	for i := 0; i < 16; i++ {
		if bits&(1<<i) == 0 {
			continue
		}
		if i < len(capabilityNames) {
			out = append(out, capabilityNames[i])
		} else {
			out = append(out, "bit "+strconv.Itoa(i))
		}
	}
	return out
}

// MarshalJSON renders the capability names.
func (c Capabilities) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Supported []string `json:"supported"`
		Enabled   []string `json:"enabled"`
	}{capNames(c.Supported), capNames(c.Enabled)})
}

// ManagementAddress is one management address TLV.
type ManagementAddress struct {
	// Family is the IANA address family (1 IPv4, 2 IPv6, 6 802 MAC, ...).
	Family int
	// Address is the address bytes after the family.
	Address []byte
	// InterfaceSubtype (1 unknown, 2 ifIndex, 3 system port) and InterfaceNumber.
	InterfaceSubtype int
	InterfaceNumber  uint32
	// OID is the object identifier, usually empty.
	OID []byte
}

// String renders an IPv4/IPv6/MAC address, else hex.
func (m ManagementAddress) String() string {
	switch {
	case m.Family == 1 && len(m.Address) == 4, m.Family == 2 && len(m.Address) == 16:
		return net.IP(m.Address).String()
	case m.Family == 6 && len(m.Address) == 6:
		return net.HardwareAddr(m.Address).String()
	}
	return text(m.Address)
}

// MarshalJSON renders the address as a string.
func (m ManagementAddress) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

// VLAN is one 802.1 VLAN name TLV.
type VLAN struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// LinkAggregation is the 802.1 (or legacy 802.3) link aggregation TLV.
type LinkAggregation struct {
	// Status bit 0: capable, bit 1: enabled.
	Status byte   `json:"-"`
	PortID uint32 `json:"port_id"`
	// IEEE8023 is true when it came in the legacy 802.3 TLV.
	IEEE8023 bool `json:"-"`
}

// Capable and Enabled read the status bits.
func (l LinkAggregation) Capable() bool { return l.Status&1 != 0 }

// Enabled reports whether the port is aggregated.
func (l LinkAggregation) Enabled() bool { return l.Status&2 != 0 }

// MarshalJSON renders capable/enabled/port_id.
func (l LinkAggregation) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Capable bool   `json:"capable"`
		Enabled bool   `json:"enabled"`
		PortID  uint32 `json:"port_id"`
	}{l.Capable(), l.Enabled(), l.PortID})
}

// LLDP is one neighbour's LLDPDU, decoded. Fields are zero when the TLV was
// absent. TLVs it does not decode — other organisations' TLVs, duplicates and
// malformed ones — are kept verbatim in Unknown, so [LLDP.TLVs] gives back
// everything that was heard.
type LLDP struct {
	ChassisID           *ChassisID          `json:"chassis_id,omitempty"`
	PortID              *PortID             `json:"port_id,omitempty"`
	TTL                 *int                `json:"ttl,omitempty"`
	PortDescription     *string             `json:"port_description,omitempty"`
	SystemName          *string             `json:"system_name,omitempty"`
	SystemDescription   *string             `json:"system_description,omitempty"`
	Capabilities        *Capabilities       `json:"capabilities,omitempty"`
	ManagementAddresses []ManagementAddress `json:"management_addresses,omitempty"`
	// PVID is the 802.1 port VLAN id.
	PVID  *int   `json:"pvid,omitempty"`
	VLANs []VLAN `json:"vlans,omitempty"`
	// LinkAggregation is the 802.1 (or 802.3) link aggregation TLV.
	LinkAggregation *LinkAggregation `json:"link_aggregation,omitempty"`
	// MaxFrameSize is the 802.3 maximum frame size (the port's MTU plus the
	// Ethernet header and FCS: 1514/1518 for a 1500 MTU, 9216 for jumbo).
	MaxFrameSize *int `json:"max_frame_size,omitempty"`
	// End is true when the end-of-LLDPDU TLV was seen.
	End bool `json:"end"`
	// Unknown holds the TLVs not decoded above, in the order heard.
	Unknown []TLV `json:"unknown,omitempty"`
	// Problems describes junk that was skipped or kept undecoded.
	Problems []string `json:"problems,omitempty"`
}

// Name returns the system name, or "" when none was sent.
func (l *LLDP) Name() string {
	if l == nil || l.SystemName == nil {
		return ""
	}
	return *l.SystemName
}

// Port returns the port ID rendered, or "" when none was sent.
func (l *LLDP) Port() string {
	if l == nil || l.PortID == nil {
		return ""
	}
	return l.PortID.String()
}

// Description returns the port description, or "" when none was sent.
func (l *LLDP) Description() string {
	if l == nil || l.PortDescription == nil {
		return ""
	}
	return *l.PortDescription
}

// DecodeLLDPJSON decodes IPA's JSON list of [type, "hex"] pairs.
func DecodeLLDPJSON(b []byte) (LLDP, error) {
	tlvs, problems, err := ParseTLVPairs(b)
	if err != nil {
		return LLDP{}, err
	}
	l, derr := DecodeLLDP(tlvs)
	if len(problems) > 0 {
		l.Problems = append(problems, l.Problems...)
		return l, problemsErr(l.Problems)
	}
	return l, derr
}

// DecodeLLDP decodes TLVs. It never gives up on junk: everything decodable is
// decoded, the rest is kept in Unknown or skipped, and the returned error
// (non-nil only then) lists the problems, which are also in LLDP.Problems.
// TLVs after end-of-LLDPDU are ignored, as a receiver must.
func DecodeLLDP(tlvs []TLV) (LLDP, error) {
	var l LLDP
	keep := func(t TLV, problem string) {
		l.Unknown = append(l.Unknown, TLV{Type: t.Type, Value: append([]byte(nil), t.Value...)})
		if problem != "" {
			l.Problems = append(l.Problems, problem)
		}
	}
	for i, t := range tlvs {
		if l.End {
			l.Problems = append(l.Problems, fmt.Sprintf("%d TLV(s) after end-of-LLDPDU ignored", len(tlvs)-i))
			break
		}
		v := t.Value
		switch t.Type {
		case TLVEnd:
			if len(v) != 0 {
				l.Problems = append(l.Problems, fmt.Sprintf("end-of-LLDPDU carries %d byte(s); ignored", len(v)))
			}
			l.End = true
		case TLVChassisID, TLVPortID:
			name := map[int]string{TLVChassisID: "chassis ID", TLVPortID: "port ID"}[t.Type]
			switch {
			case len(v) < 2 || len(v) > 256:
				keep(t, fmt.Sprintf("%s TLV of %d byte(s) is malformed; kept undecoded", name, len(v)))
			case t.Type == TLVChassisID && l.ChassisID == nil:
				l.ChassisID = &ChassisID{ID{Subtype: int(v[0]), Raw: append([]byte(nil), v[1:]...)}}
			case t.Type == TLVPortID && l.PortID == nil:
				l.PortID = &PortID{ID{Subtype: int(v[0]), Raw: append([]byte(nil), v[1:]...)}}
			default:
				keep(t, "duplicate "+name+" TLV kept undecoded")
			}
		case TLVTTL:
			switch {
			case len(v) != 2:
				keep(t, fmt.Sprintf("TTL TLV of %d byte(s) is malformed; kept undecoded", len(v)))
			case l.TTL != nil:
				keep(t, "duplicate TTL TLV kept undecoded")
			default:
				ttl := int(binary.BigEndian.Uint16(v))
				l.TTL = &ttl
			}
		case TLVPortDescription, TLVSystemName, TLVSystemDescription:
			dst := map[int]**string{TLVPortDescription: &l.PortDescription, TLVSystemName: &l.SystemName, TLVSystemDescription: &l.SystemDescription}[t.Type]
			if *dst != nil {
				keep(t, fmt.Sprintf("duplicate TLV %d kept undecoded", t.Type))
				break
			}
			s := string(v)
			*dst = &s
		case TLVCapabilities:
			switch {
			case len(v) != 4:
				keep(t, fmt.Sprintf("capabilities TLV of %d byte(s) is malformed; kept undecoded", len(v)))
			case l.Capabilities != nil:
				keep(t, "duplicate capabilities TLV kept undecoded")
			default:
				l.Capabilities = &Capabilities{Supported: binary.BigEndian.Uint16(v), Enabled: binary.BigEndian.Uint16(v[2:])}
			}
		case TLVManagementAddress:
			m, ok := decodeMgmt(v)
			if !ok {
				keep(t, fmt.Sprintf("management address TLV of %d byte(s) is malformed; kept undecoded", len(v)))
				break
			}
			l.ManagementAddresses = append(l.ManagementAddresses, m)
		case TLVOrgSpecific:
			if ok, p := l.decodeOrg(v); !ok {
				keep(t, p)
			}
		default:
			keep(t, "")
		}
	}
	if len(l.Problems) > 0 {
		return l, problemsErr(l.Problems)
	}
	return l, nil
}

func problemsErr(p []string) error {
	return errors.New("LLDP: " + strings.Join(p, "; "))
}

// decodeMgmt reads a management address TLV: address string length (1),
// family (1), address, interface numbering subtype (1), number (4), OID
// length (1), OID.
func decodeMgmt(v []byte) (ManagementAddress, bool) {
	if len(v) < 1 {
		return ManagementAddress{}, false
	}
	n := int(v[0])
	if n < 2 || n > 32 || len(v) < 1+n+5+1 {
		return ManagementAddress{}, false
	}
	m := ManagementAddress{Family: int(v[1]), Address: append([]byte(nil), v[2:1+n]...)}
	rest := v[1+n:]
	m.InterfaceSubtype = int(rest[0])
	m.InterfaceNumber = binary.BigEndian.Uint32(rest[1:5])
	oidLen := int(rest[5])
	if oidLen > 128 || len(rest) != 6+oidLen {
		return ManagementAddress{}, false
	}
	if oidLen > 0 {
		m.OID = append([]byte(nil), rest[6:]...)
	}
	return m, true
}

// decodeOrg decodes the 802.1 and 802.3 TLVs it knows into l. It returns
// false when the TLV is to be kept undecoded, with the problem ("" for another
// organisation's TLV, which is not a problem).
func (l *LLDP) decodeOrg(v []byte) (bool, string) {
	if len(v) < 4 {
		return false, fmt.Sprintf("org-specific TLV of %d byte(s) is malformed; kept undecoded", len(v))
	}
	oui, sub, d := [3]byte{v[0], v[1], v[2]}, v[3], v[4:]
	switch {
	case oui == oui8021 && sub == 1:
		if len(d) != 2 {
			return false, "802.1 PVID TLV is malformed; kept undecoded"
		}
		if l.PVID != nil {
			return false, "duplicate 802.1 PVID TLV kept undecoded"
		}
		p := int(binary.BigEndian.Uint16(d))
		l.PVID = &p
	case oui == oui8021 && sub == 3:
		if len(d) < 3 || int(d[2]) > 32 || len(d) != 3+int(d[2]) {
			return false, "802.1 VLAN name TLV is malformed; kept undecoded"
		}
		l.VLANs = append(l.VLANs, VLAN{ID: int(binary.BigEndian.Uint16(d)), Name: string(d[3:])})
	case oui == oui8021 && sub == 7, oui == oui8023 && sub == 3:
		if len(d) != 5 {
			return false, "link aggregation TLV is malformed; kept undecoded"
		}
		if l.LinkAggregation != nil {
			return false, "duplicate link aggregation TLV kept undecoded"
		}
		l.LinkAggregation = &LinkAggregation{Status: d[0], PortID: binary.BigEndian.Uint32(d[1:]), IEEE8023: oui == oui8023}
	case oui == oui8023 && sub == 4:
		if len(d) != 2 {
			return false, "802.3 maximum frame size TLV is malformed; kept undecoded"
		}
		if l.MaxFrameSize != nil {
			return false, "duplicate 802.3 maximum frame size TLV kept undecoded"
		}
		m := int(binary.BigEndian.Uint16(d))
		l.MaxFrameSize = &m
	default:
		return false, "" // another organisation's TLV (LLDP-MED, vendor): kept, not a problem
	}
	return true, ""
}

// TLVs encodes the decoded LLDPDU back to TLVs in the standard order:
// chassis ID, port ID, TTL, the optional TLVs, the 802.1/802.3 TLVs, the
// undecoded ones, then end-of-LLDPDU when one was heard. Decoding the result
// gives back l (without the problems of the original input).
func (l LLDP) TLVs() []TLV {
	var out []TLV
	add := func(t int, v []byte) { out = append(out, TLV{Type: t, Value: v}) }
	if l.ChassisID != nil {
		add(TLVChassisID, append([]byte{byte(l.ChassisID.Subtype)}, l.ChassisID.Raw...))
	}
	if l.PortID != nil {
		add(TLVPortID, append([]byte{byte(l.PortID.Subtype)}, l.PortID.Raw...))
	}
	if l.TTL != nil {
		add(TLVTTL, binary.BigEndian.AppendUint16(nil, uint16(*l.TTL)))
	}
	for _, s := range []struct {
		t int
		v *string
	}{{TLVPortDescription, l.PortDescription}, {TLVSystemName, l.SystemName}, {TLVSystemDescription, l.SystemDescription}} {
		if s.v != nil {
			add(s.t, []byte(*s.v))
		}
	}
	if c := l.Capabilities; c != nil {
		add(TLVCapabilities, binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, c.Supported), c.Enabled))
	}
	for _, m := range l.ManagementAddresses {
		v := []byte{byte(1 + len(m.Address)), byte(m.Family)}
		v = append(v, m.Address...)
		v = append(v, byte(m.InterfaceSubtype))
		v = binary.BigEndian.AppendUint32(v, m.InterfaceNumber)
		v = append(v, byte(len(m.OID)))
		add(TLVManagementAddress, append(v, m.OID...))
	}
	org := func(oui [3]byte, sub byte, d ...byte) {
		add(TLVOrgSpecific, append([]byte{oui[0], oui[1], oui[2], sub}, d...))
	}
	if l.PVID != nil {
		org(oui8021, 1, binary.BigEndian.AppendUint16(nil, uint16(*l.PVID))...)
	}
	for _, vl := range l.VLANs {
		d := binary.BigEndian.AppendUint16(nil, uint16(vl.ID))
		org(oui8021, 3, append(append(d, byte(len(vl.Name))), vl.Name...)...)
	}
	if a := l.LinkAggregation; a != nil {
		oui, sub := oui8021, byte(7)
		if a.IEEE8023 {
			oui, sub = oui8023, 3
		}
		org(oui, sub, binary.BigEndian.AppendUint32([]byte{a.Status}, a.PortID)...)
	}
	if l.MaxFrameSize != nil {
		org(oui8023, 4, binary.BigEndian.AppendUint16(nil, uint16(*l.MaxFrameSize))...)
	}
	for _, t := range l.Unknown {
		add(t.Type, append([]byte(nil), t.Value...))
	}
	if l.End {
		add(TLVEnd, []byte{})
	}
	return out
}

// clip shortens junk quoted in a problem.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
