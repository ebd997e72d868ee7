package redfish

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hostforge/hostforge/bmc"
)

// The iDRAC Lifecycle Controller job queue.

func (c *client) jobsPath(ctx context.Context) (string, error) {
	m, err := c.manager(ctx)
	if err != nil {
		return "", err
	}
	if p := link(m, "Oem", "Dell", "Jobs"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("redfish: no job queue on this manager: %w", bmc.ErrUnsupported)
}

func (c *client) ListJobs(ctx context.Context) ([]bmc.Job, error) {
	p, err := c.jobsPath(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := c.members(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []bmc.Job
	for _, d := range ds {
		out = append(out, bmc.Job{ID: str(d, "Id"), Name: str(d, "Name"), State: str(d, "JobState"), Message: str(d, "Message")})
	}
	return out, nil
}

func (c *client) DeleteJob(ctx context.Context, id string) error {
	p, err := c.jobsPath(ctx)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodDelete, p+"/"+id, nil)
	return err
}
