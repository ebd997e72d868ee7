package extensions

import (
	"context"
	"encoding/json"
	"time"
)

// Runner runs one task. The webhook, SSH and Ansible runners implement it
// against real systems; extensionsfake.Runner records what it is handed.
//
// Run makes one delivery: it returns the outcome, or a *hostforge.Failure
// (or a *hostforge.Wait to be called again later). It may retry inside the
// task's own timeout (a webhook's retries), always with the same
// Request.DeliveryID. It never logs a body (req.Body, req.Variables, an
// answer or output); bodies it reports go in a Failure's Detail, which
// log lines leave out, or in Result.Message. When req.IncludesSecrets is
// set, what it reports holds the request and the answer it got back only
// as Recorded gives them: their Digest.
type Runner interface {
	Run(ctx context.Context, req Request) (Result, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, req Request) (Result, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, req Request) (Result, error) { return f(ctx, req) }

// Request is one task delivery, rendered and ready to run.
type Request struct {
	// DeliveryID is stable per (event, extension, task) and the same on
	// every retry: the webhook-id of a webhook.
	DeliveryID string
	EventID    string
	Stage      Stage
	Extension  string
	// Task is the task's label.
	Task     string
	TaskType TaskType
	// Deadline is the event's stage deadline: the task must finish by
	// then, whatever its own timeout.
	Deadline time.Time
	// The task's options; the one matching TaskType is set.
	Webhook *WebhookOptions
	SSH     *SSHOptions
	Ansible *AnsibleOptions
	// Assets are the definition's assets (an Ansible task's bundle, its ee).
	Assets []Asset
	// Source is where the definition was read from (a file path, or ""):
	// an asset's relative local path resolves against its directory.
	Source string
	// Body is the rendered requestTemplate (webhook) or commandTemplate (SSH).
	Body string
	// Variables are an Ansible task's extra-vars (a JSON object).
	Variables json.RawMessage
	// IncludesSecrets says the task receives secrets — it opted into the
	// payload's (includeSecrets), or its extension declares an isPassword
	// input or configVar — so Body and Variables may hold them, and the
	// receiver's answer may echo them: the runner reports both only by
	// their Digest (Recorded).
	IncludesSecrets bool
}

// Result is what a task run produced.
type Result struct {
	// Message says what happened (a response status, the tail of output);
	// it is recorded after secrets are scrubbed from it, and never logged.
	Message string
	// Outputs, when set, replace the extension's stored outputs (an Ansible
	// playbook's context JSON; MetalSoft replaces outputs on every run).
	// nil leaves them alone.
	Outputs json.RawMessage
}
