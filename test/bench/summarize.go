package bench

// Summarize returns the PresetResult of runs of the scenario that cfg
// describes: each run's writes-alone figures are set to the median over
// its systems', and the medians of every system's figures over the runs
// are taken. A command that measures systems in processes of their own
// assembles their runs with it.
func Summarize(cfg Config, counts Counts, runs []RunResult, systems []string) *PresetResult {
	for i := range runs {
		rr := &runs[i]
		churns := make([]ChurnResult, len(rr.Systems))
		for j, s := range rr.Systems {
			churns[j] = s.Churn
		}
		rr.WriteCPUPerChange = medianOf(churns, func(c ChurnResult) int64 { return c.WriteCPUPerChange })
		rr.WriteSteadyCPUPerChange = medianOf(churns, func(c ChurnResult) int64 { return c.WriteSteadyCPUPerChange })
		rr.WriteAllocsPerChange = medianOf(churns, func(c ChurnResult) int64 { return c.WriteAllocsPerChange })
	}
	return &PresetResult{Config: cfg, Counts: counts, Runs: runs, Medians: medians(runs, systems)}
}

// medians returns, per system, the median of every figure over the runs.
func medians(runs []RunResult, systems []string) []SystemResult {
	var out []SystemResult
	for _, name := range systems {
		var rs []SystemResult
		for _, run := range runs {
			for _, s := range run.Systems {
				if s.System == name {
					rs = append(rs, s)
				}
			}
		}
		if len(rs) == 0 {
			continue
		}
		f := func(get func(SystemResult) float64) float64 {
			xs := make([]float64, len(rs))
			for i, r := range rs {
				xs[i] = get(r)
			}
			return median(xs)
		}
		i := func(get func(SystemResult) int64) int64 {
			xs := make([]int64, len(rs))
			for i, r := range rs {
				xs[i] = get(r)
			}
			return median(xs)
		}
		m := SystemResult{
			System:               name,
			SyncSeconds:          f(func(r SystemResult) float64 { return r.SyncSeconds }),
			SyncCPUSeconds:       f(func(r SystemResult) float64 { return r.SyncCPUSeconds }),
			SyncSystemCPUSeconds: f(func(r SystemResult) float64 { return r.SyncSystemCPUSeconds }),
			SyncMinorFaults:      i(func(r SystemResult) int64 { return r.SyncMinorFaults }),
			SyncGCCycles:         i(func(r SystemResult) int64 { return r.SyncGCCycles }),
			SyncGCPauseSeconds:   f(func(r SystemResult) float64 { return r.SyncGCPauseSeconds }),
			HeapAlloc:            i(func(r SystemResult) int64 { return r.HeapAlloc }),
			HeapInuse:            i(func(r SystemResult) int64 { return r.HeapInuse }),
			Events:               i(func(r SystemResult) int64 { return r.Events }),
			Churn: ChurnResult{
				Changes:                     rs[0].Churn.Changes,
				P50:                         i(func(r SystemResult) int64 { return r.Churn.P50 }),
				P99:                         i(func(r SystemResult) int64 { return r.Churn.P99 }),
				Max:                         i(func(r SystemResult) int64 { return r.Churn.Max }),
				CPUPerChange:                i(func(r SystemResult) int64 { return r.Churn.CPUPerChange }),
				HandlerCPUPerChange:         i(func(r SystemResult) int64 { return r.Churn.HandlerCPUPerChange }),
				SteadyCPUPerChange:          i(func(r SystemResult) int64 { return r.Churn.SteadyCPUPerChange }),
				HandlerSteadyCPUPerChange:   i(func(r SystemResult) int64 { return r.Churn.HandlerSteadyCPUPerChange }),
				DeliveredCPUPerChange:       i(func(r SystemResult) int64 { return r.Churn.DeliveredCPUPerChange }),
				DeliveredSteadyCPUPerChange: i(func(r SystemResult) int64 { return r.Churn.DeliveredSteadyCPUPerChange }),
				DeliveredAllocsPerChange:    i(func(r SystemResult) int64 { return r.Churn.DeliveredAllocsPerChange }),
				DeliveredP50:                i(func(r SystemResult) int64 { return r.Churn.DeliveredP50 }),
				WriteCPUPerChange:           i(func(r SystemResult) int64 { return r.Churn.WriteCPUPerChange }),
				WriteSteadyCPUPerChange:     i(func(r SystemResult) int64 { return r.Churn.WriteSteadyCPUPerChange }),
				WriteAllocsPerChange:        i(func(r SystemResult) int64 { return r.Churn.WriteAllocsPerChange }),
				AllocsPerChange:             i(func(r SystemResult) int64 { return r.Churn.AllocsPerChange }),
				BytesPerChange:              i(func(r SystemResult) int64 { return r.Churn.BytesPerChange }),
				HandlerAllocsPerChange:      i(func(r SystemResult) int64 { return r.Churn.HandlerAllocsPerChange }),
				EventsPerSecond:             f(func(r SystemResult) float64 { return r.Churn.EventsPerSecond }),
				Missed:                      int(i(func(r SystemResult) int64 { return int64(r.Churn.Missed) })),
				Stray:                       int(i(func(r SystemResult) int64 { return int64(r.Churn.Stray) })),
			},
		}
		for q := range rs[0].Queries {
			m.Queries = append(m.Queries, QueryResult{
				Name:        rs[0].Queries[q].Name,
				Result:      rs[0].Queries[q].Result,
				NsPerOp:     f(func(r SystemResult) float64 { return r.Queries[q].NsPerOp }),
				AllocsPerOp: i(func(r SystemResult) int64 { return r.Queries[q].AllocsPerOp }),
				BytesPerOp:  i(func(r SystemResult) int64 { return r.Queries[q].BytesPerOp }),
			})
		}
		out = append(out, m)
	}
	return out
}

// medianOf is the median of f over rs.
func medianOf(rs []ChurnResult, f func(ChurnResult) int64) int64 {
	vs := make([]int64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	return median(vs)
}
