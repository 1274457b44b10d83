package watchlist_test

import (
	"fmt"

	istiofake "istio.io/client-go/pkg/clientset/versioned/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/meshreg/meshreg/internal/watchlist"
)

// client-go's fake says it cannot serve the watch-list protocol; istio
// client-go's does not say, and is taken as unable because it is a fake
// over client-go's object tracker. A client of a real API server (here a
// value that is neither) may stream.
func ExampleUnsupported() {
	fmt.Println(watchlist.Unsupported(kubefake.NewClientset()))
	fmt.Println(watchlist.Unsupported(istiofake.NewSimpleClientset()))
	fmt.Println(watchlist.Unsupported(struct{}{}))
	// Output:
	// true
	// true
	// false
}
