package derived

import "time"

// Debounce is how a loop batches its marks: it applies a batch once no
// mark has come for Quiet, or Max after the batch's first mark, whichever
// comes first. A Quiet of zero or less applies at once (marks that come
// while a batch is applied are the next batch); a Max of zero or less
// sets no maximum.
type Debounce struct {
	Quiet, Max time.Duration
}

// Istio's debounce: PILOT_DEBOUNCE_AFTER and PILOT_DEBOUNCE_MAX.
const (
	DefaultQuiet = 100 * time.Millisecond
	DefaultMax   = 10 * time.Second
)

// Wait returns how long to wait, at now, before applying a batch whose
// first mark came at first and latest at latest; 0 when it is due.
func (d Debounce) Wait(first, latest, now time.Time) time.Duration {
	if d.Quiet <= 0 {
		return 0
	}
	wait := latest.Add(d.Quiet).Sub(now)
	if d.Max > 0 {
		wait = min(wait, first.Add(d.Max).Sub(now))
	}
	return max(wait, 0)
}
