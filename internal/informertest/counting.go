package informertest

import (
	"sync"

	"k8s.io/client-go/tools/cache"
)

// Counting is a shared informer that counts the handlers added to it and
// not yet removed. Wrap, when set, is applied to each handler added (a
// test's hook into delivery). It is safe for concurrent use.
type Counting struct {
	cache.SharedIndexInformer
	Wrap func(cache.ResourceEventHandler) cache.ResourceEventHandler

	mu   sync.Mutex
	regs map[cache.ResourceEventHandlerRegistration]bool
}

// NewCounting returns inf, counting its handlers.
func NewCounting(inf cache.SharedIndexInformer) *Counting {
	return &Counting{SharedIndexInformer: inf, regs: map[cache.ResourceEventHandlerRegistration]bool{}}
}

// AddEventHandler adds h to the informer and counts it.
func (c *Counting) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	if c.Wrap != nil {
		h = c.Wrap(h)
	}
	reg, err := c.SharedIndexInformer.AddEventHandler(h)
	if err == nil {
		c.mu.Lock()
		c.regs[reg] = true
		c.mu.Unlock()
	}
	return reg, err
}

// RemoveEventHandler removes a handler and stops counting it.
func (c *Counting) RemoveEventHandler(reg cache.ResourceEventHandlerRegistration) error {
	c.mu.Lock()
	delete(c.regs, reg)
	c.mu.Unlock()
	return c.SharedIndexInformer.RemoveEventHandler(reg)
}

// Handlers returns how many handlers are added and not removed.
func (c *Counting) Handlers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.regs)
}
