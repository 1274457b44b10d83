package syncreport

import (
	"context"
	"log/slog"
	"time"

	"github.com/meshreg/meshreg/registry"
)

// Message is the message of Watch's log records.
const Message = "initial sync is slow"

// Watch logs at level Warn, every interval from its call until pending
// returns nothing or ctx is done, what pending returns: the record's
// attributes are "waited" (since Watch was called) and "pending" (each
// registry.Pending as its String). It returns when pending returns
// nothing or ctx is done; a registry runs it on a goroutine of its Run.
func Watch(ctx context.Context, log *slog.Logger, interval time.Duration, pending func() []registry.Pending) {
	start := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ps := pending()
		if len(ps) == 0 {
			return
		}
		log.LogAttrs(ctx, slog.LevelWarn, Message,
			slog.Duration("waited", time.Since(start).Round(time.Millisecond)),
			slog.Any("pending", Strings(ps)))
	}
}

// Strings returns each Pending's String.
func Strings(ps []registry.Pending) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
