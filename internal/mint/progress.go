package mint

import (
	"fmt"
	"io"
	"time"
)

// startProgress redraws one status line (count, rate, ETA) on a terminal
// until the returned stop is called, which erases the line.
func startProgress(w io.Writer, total int, done func() int64, start time.Time) (stop func()) {
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				fmt.Fprint(w, progressLine(int(done()), total, time.Since(start)))
			}
		}
	}()
	return func() { close(quit); <-finished }
}

func progressLine(n, total int, elapsed time.Duration) string {
	rate := float64(n) / elapsed.Seconds()
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(total-n) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("\rmintpool: %d/%d minted, %.0f/s, ETA %s\x1b[K", n, total, rate, eta)
}
