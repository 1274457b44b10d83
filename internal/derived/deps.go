package derived

// Deps indexes what each derived output (a key K) read: its
// dependencies (D), so that a change of a dependency finds the outputs
// to derive again. Set records an output's dependencies as it derives
// them, replacing the ones before. It is not safe for concurrent use:
// the loop's goroutine owns it.
type Deps[K, D comparable] struct {
	of    map[K][]D
	users map[D]map[K]struct{}
}

// NewDeps returns an empty index.
func NewDeps[K, D comparable]() *Deps[K, D] {
	return &Deps[K, D]{of: map[K][]D{}, users: map[D]map[K]struct{}{}}
}

// Set records that k read deps (duplicates allowed), and only those.
func (d *Deps[K, D]) Set(k K, deps []D) {
	d.Delete(k)
	if len(deps) == 0 {
		return
	}
	kept := make([]D, 0, len(deps))
	for _, dep := range deps {
		u := d.users[dep]
		if u == nil {
			u = map[K]struct{}{}
			d.users[dep] = u
		}
		if _, dup := u[k]; !dup {
			u[k] = struct{}{}
			kept = append(kept, dep)
		}
	}
	d.of[k] = kept
}

// Delete forgets k.
func (d *Deps[K, D]) Delete(k K) {
	for _, dep := range d.of[k] {
		u := d.users[dep]
		delete(u, k)
		if len(u) == 0 {
			delete(d.users, dep)
		}
	}
	delete(d.of, k)
}

// Users calls f with each output that read dep, in no order.
func (d *Deps[K, D]) Users(dep D, f func(K)) {
	for k := range d.users[dep] {
		f(k)
	}
}

// Len returns the number of outputs that read anything.
func (d *Deps[K, D]) Len() int { return len(d.of) }
