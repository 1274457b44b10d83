package index

import (
	"slices"
	"sync/atomic"

	"github.com/meshreg/meshreg/model"
)

// Services holds services by key, and by hostname in precedence order
// (model.ComparePrecedence). The zero value is empty and ready to use.
type Services struct {
	byKey  map[model.ServiceKey]*model.Service
	byHost map[model.Hostname]hostServices
	// view is every service sorted by key: built by Sorted, dropped by
	// every write.
	view atomic.Pointer[[]*model.Service]
}

// hostServices are the services of a hostname in precedence order; first
// is all[0], kept in the map's value so that Winner reads no more memory
// than the map entry.
type hostServices struct {
	first *model.Service
	all   []*model.Service
}

// Reserve makes the empty index ready for about n services, so that a
// registry's initial state does not grow its maps step by step.
func (x *Services) Reserve(n int) {
	x.byKey = make(map[model.ServiceKey]*model.Service, n)
	x.byHost = make(map[model.Hostname]hostServices, n)
}

// Len returns the number of services.
func (x *Services) Len() int { return len(x.byKey) }

// Get returns the service with the key, or nil.
func (x *Services) Get(key model.ServiceKey) *model.Service { return x.byKey[key] }

// Winner returns the service of the hostname that wins precedence, or
// nil.
func (x *Services) Winner(host model.Hostname) *model.Service { return x.byHost[host].first }

// Put stores svc in place of the service with its key, and returns the
// service it replaced, or nil.
func (x *Services) Put(svc *model.Service) (prev *model.Service) {
	if x.byKey == nil {
		x.Reserve(0)
	}
	key := svc.Key()
	prev = x.byKey[key]
	x.byKey[key] = svc
	x.setHost(key.Hostname, prev, svc)
	x.view.Store(nil)
	return prev
}

// Delete removes the service with the key, and returns it, or nil.
func (x *Services) Delete(key model.ServiceKey) (prev *model.Service) {
	prev = x.byKey[key]
	if prev == nil {
		return nil
	}
	delete(x.byKey, key)
	x.setHost(key.Hostname, prev, nil)
	x.view.Store(nil)
	return prev
}

// setHost replaces prev with cur (either may be nil) among the services
// of a hostname, keeping precedence order. The list is copied, not
// changed in place.
func (x *Services) setHost(host model.Hostname, prev, cur *model.Service) {
	list := x.byHost[host].all
	if prev != nil {
		list = slices.DeleteFunc(slices.Clone(list), func(s *model.Service) bool { return s == prev })
	}
	if cur != nil {
		list = append(list, cur)
		slices.SortFunc(list, model.ComparePrecedence)
	}
	if len(list) == 0 {
		delete(x.byHost, host)
	} else {
		x.byHost[host] = hostServices{first: list[0], all: list}
	}
}

// Cached returns the view Sorted built, if no write has dropped it since,
// else nil. It needs no lock.
func (x *Services) Cached() []*model.Service {
	if v := x.view.Load(); v != nil {
		return *v
	}
	return nil
}

// Sorted returns every service, sorted by key (model.ServiceKey.Compare),
// in a slice kept until the next write; never nil.
func (x *Services) Sorted() []*model.Service {
	if v := x.view.Load(); v != nil {
		return *v
	}
	out := make([]*model.Service, 0, len(x.byKey))
	for _, svc := range x.byKey {
		out = append(out, svc)
	}
	slices.SortFunc(out, compareServices)
	x.view.Store(&out)
	return out
}

// compareServices orders services by key.
func compareServices(a, b *model.Service) int { return a.Key().Compare(b.Key()) }
