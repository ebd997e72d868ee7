package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/hostforge/hostforge"
)

// Connector opens an authenticated connection to a BMC. Connect verifies the
// credential with one authenticated read (never a write, so a converged run
// stays write-free): it returns an error wrapping hostforge.ErrUnauthorized
// when the BMC refuses it and hostforge.ErrUnavailable when Redfish does not
// answer.
type Connector interface {
	Connect(ctx context.Context, address string, cred Credential) (Client, error)
}

// Client is everything a vendor strategy asks of one BMC. It is composed of
// small role interfaces; an implementation returns ErrUnsupported (wrapped)
// for an endpoint its model lacks, hostforge's system errors for what the BMC
// said, and an *Error carrying the BMC's own message for HTTP refusals.
type Client interface {
	Identifier
	Accounts
	Network
	Syslog
	Bios
	Boot
	Jobs
	Power
	Links
}

// Identifier reads what vendor detection needs.
type Identifier interface {
	Identify(ctx context.Context) (Identity, error)
}

// Identity is what the service root, the first manager and the first system
// say about who made the BMC.
type Identity struct {
	// Vendor and Product are the service root's fields ("" when absent).
	Vendor  string `json:"vendor,omitempty"`
	Product string `json:"product,omitempty"`
	// RootOem lists the keys of the service root's Oem object.
	RootOem []string `json:"root_oem,omitempty"`
	// ManagerModel and ManagerOem are the first manager's Model and Oem keys.
	ManagerModel string   `json:"manager_model,omitempty"`
	ManagerOem   []string `json:"manager_oem,omitempty"`
	// SystemManufacturer is the first system's Manufacturer.
	SystemManufacturer string `json:"system_manufacturer,omitempty"`
}

// Account is one BMC user account.
type Account struct {
	ID       string `json:"id"`
	UserName string `json:"user_name"`
	Role     string `json:"role"`
	Enabled  bool   `json:"enabled"`
}

// Accounts manages the BMC's user accounts.
type Accounts interface {
	// ListAccounts returns the accounts in use (empty slots are left out).
	// ErrUnsupported when the model has no account endpoint.
	ListAccounts(ctx context.Context) ([]Account, error)
	// SetPassword changes one account's password.
	SetPassword(ctx context.Context, id, password string) error
	// CreateAccount adds an account (filling a free slot where the BMC has
	// fixed slots) and returns its id.
	CreateAccount(ctx context.Context, a Account, password string) (string, error)
	// UpdateAccount sets an account's role and enabled flag.
	UpdateAccount(ctx context.Context, a Account) error
	// DeleteAccount removes an account: DELETE where the BMC creates
	// accounts, an emptied and disabled slot where its slots are fixed. An
	// account that does not exist is hostforge.ErrNotFound.
	DeleteAccount(ctx context.Context, id string) error
}

// ManagerNetwork is the BMC's own network configuration.
type ManagerNetwork struct {
	Hostname     string   `json:"hostname"`
	DHCP         bool     `json:"dhcp"`
	NTPEnabled   bool     `json:"ntp_enabled"`
	NTPServers   []string `json:"ntp_servers,omitempty"`
	IPMIOverLAN  bool     `json:"ipmi_over_lan"`
	VirtualMedia bool     `json:"virtual_media"`
	// Protocols is the enabled state of the insecure protocols the BMC
	// exposes, by Redfish NetworkProtocol name: HTTP, Telnet, SSDP. A protocol
	// the BMC does not expose is absent.
	Protocols map[string]bool `json:"protocols,omitempty"`
}

// NetworkPatch changes only its non-nil fields.
type NetworkPatch struct {
	Hostname     *string
	DHCP         *bool
	NTPEnabled   *bool
	NTPServers   []string
	IPMIOverLAN  *bool
	VirtualMedia *bool
	Protocols    map[string]bool
}

// Network reads and writes the manager's network settings.
type Network interface {
	ManagerNetwork(ctx context.Context) (ManagerNetwork, error)
	SetManagerNetwork(ctx context.Context, p NetworkPatch) error
}

// Syslog reads and writes the BMC's remote syslog targets.
type Syslog interface {
	SyslogServers(ctx context.Context) ([]string, error)
	SetSyslogServers(ctx context.Context, servers []string) error
}

// Bios reads and stages BIOS attributes.
type Bios interface {
	// BiosAttributes returns the current attributes and those staged for the
	// next boot (pending holds only values that differ from current).
	BiosAttributes(ctx context.Context) (current, pending map[string]any, err error)
	// SetBiosAttributes stages attributes for the next boot. On a BMC that
	// stages settings as a job (iDRAC) it returns the job's id.
	SetBiosAttributes(ctx context.Context, attrs map[string]any) (jobID string, err error)
}

// BootOption is one UEFI boot option.
type BootOption struct {
	// ID is the BootOptionReference (e.g. Boot0003).
	ID             string `json:"id"`
	DisplayName    string `json:"display_name"`
	UefiDevicePath string `json:"uefi_device_path,omitempty"`
	// Enabled is nil when the BMC does not expose BootOptionEnabled.
	Enabled *bool `json:"enabled,omitempty"`
}

// Boot reads and writes boot options and the boot order.
type Boot interface {
	BootOptions(ctx context.Context) ([]BootOption, error)
	SetBootOptionEnabled(ctx context.Context, id string, enabled bool) error
	// BootOrder returns the current order and the order staged for the next
	// boot (nil when nothing is staged).
	BootOrder(ctx context.Context) (current, pending []string, err error)
	// SetBootOrder writes (or stages) the order; a job id when staged as a job.
	SetBootOrder(ctx context.Context, order []string) (jobID string, err error)
}

// Job is one entry of a BMC's configuration job queue (iDRAC Lifecycle
// Controller jobs).
type Job struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}

// Job states as iDRAC reports them.
const (
	JobNew                 = "New"
	JobScheduling          = "Scheduling"
	JobScheduled           = "Scheduled"
	JobRunning             = "Running"
	JobCompleted           = "Completed"
	JobCompletedWithErrors = "CompletedWithErrors"
	JobStateFailed         = "Failed"
)

// Jobs is the configuration job queue. ErrUnsupported where there is none.
type Jobs interface {
	ListJobs(ctx context.Context) ([]Job, error)
	DeleteJob(ctx context.Context, id string) error
}

// Power resets the BMC or its host.
type Power interface {
	// ResetManager cold-resets the BMC; Redfish is unavailable for a while.
	ResetManager(ctx context.Context) error
	// ResetSystem restarts the host so staged settings apply.
	ResetSystem(ctx context.Context) error
}

// HostNIC is one host network port as the BMC sees it.
type HostNIC struct {
	MAC string `json:"mac"`
	// LinkStatus is Redfish's value: LinkUp, LinkDown, NoLink, or "" when the
	// BMC does not report it.
	LinkStatus string `json:"link_status,omitempty"`
}

// Links reads host NIC link state.
type Links interface {
	// HostNICs lists the host's NICs; ErrUnsupported when the BMC cannot.
	HostNICs(ctx context.Context) ([]HostNIC, error)
}

// ErrUnsupported: the BMC model has no endpoint for the operation.
var ErrUnsupported = errors.New("not supported by this BMC")

// Error is an HTTP refusal from the BMC with the BMC's own message. It
// unwraps to the hostforge system error of its status class, so
// errors.Is(err, hostforge.ErrUnavailable) is true for a 5xx.
type Error struct {
	Status  int
	Message string
	Err     error
}

// HTTPError classifies a BMC's HTTP answer.
func HTTPError(status int, message string) *Error {
	e := &Error{Status: status, Message: message}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Err = hostforge.ErrUnauthorized
	case status == http.StatusNotFound:
		e.Err = hostforge.ErrNotFound
	case status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented:
		e.Err = ErrUnsupported
	case status == http.StatusConflict || status == http.StatusPreconditionFailed:
		e.Err = hostforge.ErrConflict
	case status >= 500:
		e.Err = hostforge.ErrUnavailable
	default:
		e.Err = hostforge.ErrInvalid
	}
	return e
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("BMC answered HTTP %d", e.Status)
	}
	return fmt.Sprintf("BMC answered HTTP %d: %s", e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// bmcMessage returns the BMC's own message in err's chain, or err's text.
func bmcMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}
