package derived_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/meshreg/meshreg/internal/derived"
)

// A view of its own over the core: its marks are words to count, its
// state the count, and a subscriber hears the state first, then each
// change.
func Example() {
	var mu sync.Mutex
	count := 0
	loop := derived.NewLoop[[]string, int]("words", func() []string { return nil }, derived.Debounce{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = loop.Run(ctx, func() func() { return func() {} }, func(words []string, _ time.Time) (int, bool) {
			mu.Lock()
			defer mu.Unlock()
			count += len(words)
			return count, len(words) > 0
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return count
		})
	}()
	heard := make(chan int, 10)
	loop.Subscribe(func(n int) { heard <- n })
	fmt.Println("state first:", <-heard)
	loop.Mark(func(m *[]string) { *m = append(*m, "a", "b") })
	fmt.Println("then a change:", <-heard)
	cancel()
	<-done
	// Output:
	// state first: 0
	// then a change: 2
}
