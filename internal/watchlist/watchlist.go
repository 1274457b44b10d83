package watchlist

import (
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// unsupported is what client-go's reflector asks of a ListerWatcher, or
// a client, to learn that it cannot use the watch-list protocol.
type unsupported interface {
	IsWatchListSemanticsUnSupported() bool
}

// Unsupported reports whether client cannot serve the watch-list
// protocol: it says so (IsWatchListSemanticsUnSupported returns true), or
// it is a fake clientset over client-go's object tracker
// (clienttesting.FakeClient), which never sends the bookmark that ends
// the initial events.
func Unsupported(client any) bool {
	if u, ok := client.(unsupported); ok && u.IsWatchListSemanticsUnSupported() {
		return true
	}
	_, fake := client.(clienttesting.FakeClient)
	return fake
}

// ListerWatcher returns lw as the ListerWatcher of an informer over
// client: one that tells client-go's reflector to list rather than
// stream the initial objects when Unsupported(client).
func ListerWatcher(lw *cache.ListWatch, client any) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(lw, declared(Unsupported(client)))
}

// declared says whether a client supports the watch-list protocol, as
// cache.ToListWatcherWithWatchListSemantics asks.
type declared bool

func (d declared) IsWatchListSemanticsUnSupported() bool { return bool(d) }
