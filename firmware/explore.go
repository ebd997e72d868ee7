package firmware

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/hostforge/hostforge/clock"
)

// Explorer reads managed hosts' firmware inventories and stores what the
// update manager compares with the catalog (the observation): NICo's Site
// Explorer. The update workflow refreshes the observation of a host it
// updates; the explorer keeps every other host's fresh, so that drift is
// seen at all.
type Explorer struct {
	Store Store
	Hosts Hosts
	BMC   BMCClient
	// Catalog is the files' catalog; the store's overrides are applied.
	Catalog CatalogSource
	Clock   clock.Clock
	// MaxAge: a host observed more recently is not read again (default
	// 30 min).
	MaxAge time.Duration
	// Concurrency bounds the inventories read at once (default 8).
	Concurrency int
	// Budget bounds one Explore: no read starts once it is spent (the
	// rest, the oldest observations first, wait for the next one). Zero
	// is no bound.
	Budget time.Duration
}

// ExploreReport is what one Explore did.
type ExploreReport struct {
	// Observed lists the machines whose inventory was read and stored.
	Observed []string `json:"observed,omitempty"`
	// Failed maps a machine to why its inventory could not be read.
	Failed map[string]string `json:"failed,omitempty"`
	// Deferred counts the machines left for the next run by the budget.
	Deferred int `json:"deferred,omitempty"`
}

// Explore reads the inventory of every managed host without a request
// whose observation is older than MaxAge (a host with a request is its
// workflow's to read). It returns an error only when the store or the host
// list does not answer; a BMC that does not is reported per machine.
func (x *Explorer) Explore(ctx context.Context) (ExploreReport, error) {
	var rep ExploreReport
	maxAge, workers := x.MaxAge, x.Concurrency
	if maxAge <= 0 {
		maxAge = 30 * time.Minute
	}
	if workers <= 0 {
		workers = 8
	}
	hosts, err := x.Hosts.List(ctx)
	if err != nil {
		return rep, err
	}
	reqs, err := x.Store.Requests(ctx)
	if err != nil {
		return rep, err
	}
	obs, err := x.Store.AllObserved(ctx)
	if err != nil {
		return rep, err
	}
	ovs, err := x.Store.Overrides(ctx)
	if err != nil {
		return rep, err
	}
	cat, err := currentOf(x.Catalog).WithOverrides(ovs)
	if err != nil {
		return rep, err
	}
	busy := map[string]bool{}
	for _, r := range reqs {
		busy[r.MachineID] = true
	}
	seen := map[string]time.Time{}
	for _, o := range obs {
		seen[o.MachineID] = o.At
	}
	now := x.Clock.Now()
	var todo []string
	for _, h := range hosts {
		if busy[h.MachineID] {
			continue
		}
		if at, ok := seen[h.MachineID]; ok && now.Sub(at) < maxAge {
			continue
		}
		todo = append(todo, h.MachineID)
	}
	// The oldest readings first (never read before all), so that a budget
	// spent leaves the freshest for the next run.
	sort.SliceStable(todo, func(i, j int) bool { return seen[todo[i]].Before(seen[todo[j]]) })
	deadline := time.Time{}
	if x.Budget > 0 {
		deadline = now.Add(x.Budget)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	var storeErr error
	deferred := 0
	for i, m := range todo {
		sem <- struct{}{}
		if !deadline.IsZero() && !x.Clock.Now().Before(deadline) {
			<-sem
			deferred = len(todo) - i
			break
		}
		wg.Add(1)
		go func(m string) {
			defer wg.Done()
			defer func() { <-sem }()
			inv, err := x.BMC.Inventory(ctx, m)
			if err != nil {
				mu.Lock()
				if rep.Failed == nil {
					rep.Failed = map[string]string{}
				}
				rep.Failed[m] = err.Error()
				mu.Unlock()
				return
			}
			reported := Reported{}
			if model, ok := cat.ForHost(inv.Identity); ok {
				reported = model.Readings(inv.Entries)
			}
			err = x.Store.PutObserved(ctx, Observed{MachineID: m, Identity: inv.Identity, Reported: reported, At: x.Clock.Now()})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				storeErr = err
				return
			}
			rep.Observed = append(rep.Observed, m)
		}(m)
	}
	wg.Wait()
	rep.Deferred = deferred
	sort.Strings(rep.Observed)
	return rep, storeErr
}
