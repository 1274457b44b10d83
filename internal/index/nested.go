package index

// AddTo sets m[k][k2] to v, making the inner map when k has none: a set
// (or map) of values by key, as the registries keep them beside their
// indexes.
func AddTo[K, K2 comparable, V any](m map[K]map[K2]V, k K, k2 K2, v V) {
	inner := m[k]
	if inner == nil {
		inner = map[K2]V{}
		m[k] = inner
	}
	inner[k2] = v
}

// RemoveFrom deletes m[k][k2], and k once its inner map is empty.
func RemoveFrom[K, K2 comparable, V any](m map[K]map[K2]V, k K, k2 K2) {
	if inner := m[k]; inner != nil {
		delete(inner, k2)
		if len(inner) == 0 {
			delete(m, k)
		}
	}
}
