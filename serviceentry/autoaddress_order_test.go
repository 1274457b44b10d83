package serviceentry

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"

	"k8s.io/apimachinery/pkg/runtime"
)

// entriesForVIPs returns n ServiceEntries without addresses, of assorted
// ages, two of which declare one host (the older wins the key).
func entriesForVIPs(t *testing.T, n int) []runtime.Object {
	var objs []runtime.Object
	for i := range n {
		host, ns := fmt.Sprintf("h%d.example.com", i), i%3
		if i == n-1 {
			host, ns = "h0.example.com", 0
		}
		objs = append(objs, load(t, fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: se%d, namespace: ns%d, creationTimestamp: "2024-01-%02dT00:00:00Z"}
spec:
  hosts: [%s]
  ports: [{number: 443, name: tls, protocol: TLS}]
  resolution: DNS
`, i, ns, 1+i%17, host))...)
	}
	return objs
}

// VIPs returns every service's auto VIPs, by key.
func vipsByService(c *Controller) map[string]string {
	out := map[string]string{}
	for _, s := range c.Services() {
		out[s.Key().String()] = fmt.Sprint(s.AutoAddresses)
	}
	return out
}

// Two controllers that see the same entries, in different orders and
// with entries coming and going on the way, give every host the same VIPs,
// in a pool crowded enough for hashes to collide: replicas agree.
func TestAutoAddressesIndependentOfEventOrder(t *testing.T) {
	objs := entriesForVIPs(t, 120)
	var want map[string]string
	for run := range 5 {
		r := rand.New(rand.NewPCG(uint64(run), 3))
		synctest.Test(t, func(t *testing.T) {
			src := &StaticSource{}
			c, err := New(src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c.state.alloc.space = 256 // before Run: crowded, so hashes collide
			startController(t, c)
			order := slices.Clone(objs)
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for i, o := range order {
				if err := src.Upsert(o); err != nil {
					t.Fatal(err)
				}
				if i%4 == 0 {
					synctest.Wait()
				}
				if i%7 == 0 { // one that was there leaves and comes back
					gone := toServiceEntry(order[r.IntN(i+1)])
					src.DeleteServiceEntry(gone.Namespace, gone.Name)
					synctest.Wait()
					_ = src.Upsert(gone)
				}
			}
			synctest.Wait()
			got := vipsByService(c)
			if len(got) != len(objs)-1 {
				t.Fatalf("%d services, want %d", len(got), len(objs)-1)
			}
			if want == nil {
				want = got
				return
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("run %d: %s has VIPs %s, another order gave %s", run, k, got[k], v)
				}
			}
		})
	}
	seen := map[string]string{}
	for k, v := range want {
		if v == "[]" {
			t.Errorf("%s has no VIPs", k)
		}
		if o, dup := seen[v]; dup {
			t.Errorf("%s and %s share %s", k, o, v)
		}
		seen[v] = k
	}
}
