package workqueue_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/meshreg/meshreg/internal/workqueue"
)

func Example() {
	// The latest version of each object changed.
	q := workqueue.New(map[string]string{}, func(b *map[string]string) bool { return len(*b) == 0 })

	// Producers: an object changed twice, another once.
	q.Add(func(b *map[string]string) { (*b)["svc/a"] = "v1" })
	q.Add(func(b *map[string]string) { (*b)["svc/a"] = "v2" })
	q.Add(func(b *map[string]string) { (*b)["pod/x"] = "v1" })

	// The worker.
	<-q.Wake()
	batch := q.Take(map[string]string{})
	for _, k := range slices.Sorted(maps.Keys(batch)) {
		fmt.Println(k, batch[k])
	}
	q.Done()
	fmt.Println("idle:", q.Idle())
	// Output:
	// pod/x v1
	// svc/a v2
	// idle: true
}
