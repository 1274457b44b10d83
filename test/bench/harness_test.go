package bench_test

import (
	"context"
	"slices"
	"testing"

	"github.com/meshreg/meshreg/test/bench"
)

func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts informers")
	}
	systems := append(slices.Clone(bench.Systems), bench.FloorNotify)
	res, err := bench.Run(context.Background(), bench.Config{Name: "tiny", Services: 12, EndpointsPerService: 5, ServicesPerNamespace: 5},
		bench.Options{Runs: 2, Changes: 40, SkipQueries: true, ServiceEntries: true, Systems: systems})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2 || len(res.Medians) != len(systems) {
		t.Fatalf("got %d runs and %d medians", len(res.Runs), len(res.Medians))
	}
	for _, m := range res.Medians {
		if m.SyncSeconds <= 0 {
			t.Errorf("%s: sync time %v", m.System, m.SyncSeconds)
		}
		if m.SyncCPUSeconds < m.SyncSystemCPUSeconds || m.SyncSystemCPUSeconds < 0 || m.SyncMinorFaults < 0 {
			t.Errorf("%s: sync CPU %vs of which kernel %vs, %d minor faults", m.System, m.SyncCPUSeconds, m.SyncSystemCPUSeconds, m.SyncMinorFaults)
		}
		if m.Churn.Missed != 0 || m.Churn.Stray != 0 {
			t.Errorf("%s: churn missed %d, stray %d", m.System, m.Churn.Missed, m.Churn.Stray)
		}
		if m.Churn.P50 <= 0 || m.Churn.P99 < m.Churn.P50 || m.Churn.EventsPerSecond <= 0 {
			t.Errorf("%s: churn %+v", m.System, m.Churn)
		}
		if m.Churn.AllocsPerChange <= 0 || m.Churn.BytesPerChange <= 0 {
			t.Errorf("%s: no allocations counted per change: %+v", m.System, m.Churn)
		}
		// The stream delivered to the watches: every change reported
		// (Missed above counts both streams), and measured.
		if m.Churn.DeliveredCPUPerChange <= 0 || m.Churn.DeliveredSteadyCPUPerChange <= 0 ||
			m.Churn.DeliveredAllocsPerChange <= 0 || m.Churn.DeliveredP50 <= 0 {
			t.Errorf("%s: delivered stream not measured: %+v", m.System, m.Churn)
		}
		if m.System != bench.Floor && m.System != bench.FloorNotify && m.Events < 12 {
			t.Errorf("%s: %d endpoints events during sync, want ≥ 12", m.System, m.Events)
		}
	}
}
