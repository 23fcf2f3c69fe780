package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/logsafe"
	"github.com/idpbench/idpbench/internal/schema"
)

// FileMode is the mode of a raw scrape: metrics hold no secrets.
const FileMode = 0o644

// DefaultTimeout bounds one scrape, request to the end of the body.
const DefaultTimeout = 2 * time.Second

// MaxBytes is the largest exposition a scrape keeps; a larger one fails.
const MaxBytes = 64 << 20

// Accept asks for the Prometheus text format (version 0.0.4), which expfmt's
// text parser reads, rather than OpenMetrics.
const Accept = "text/plain;version=0.0.4;q=1.0, */*;q=0.1"

// Scraper scrapes one metrics endpoint at a step's window edges and keeps
// each raw exposition in a file: Prefix + ".start.prom", ".end.prom" and,
// every Every inside the window, ".001.prom", ".002.prom" ... It
// implements load.WindowObserver. A failed scrape is recorded with its
// error and logged once on Log; it never fails the step. No header but
// Accept is sent, so no credential can reach a file or the record.
type Scraper struct {
	url     *url.URL
	prefix  string
	dir     string // the step file's directory: File is relative to it
	every   time.Duration
	timeout time.Duration
	client  *http.Client
	log     io.Writer

	mu      sync.Mutex
	scrapes []schema.ServerScrape
	lastErr string // the last error logged, so a repeated one is logged once
	stop    chan struct{}
	wg      sync.WaitGroup
}

// ScraperConfig configures NewScraper.
type ScraperConfig struct {
	URL     *url.URL      // the exposition endpoint (http or https)
	Prefix  string        // raw scrapes go to Prefix.start.prom ...
	StepDir string        // the step file's directory, for the recorded file names; "" = the working directory
	Every   time.Duration // scrapes inside the window; 0 = the edges only
	Timeout time.Duration // per scrape; 0 = DefaultTimeout
	Log     io.Writer     // failures, once each; nil = discarded
	// Transport sends the scrapes; nil = a transport of its own without
	// keep-alive (no idle connection to the product between scrapes).
	Transport http.RoundTripper
}

// NewScraper returns a scraper for c.
func NewScraper(c ScraperConfig) *Scraper {
	s := &Scraper{url: c.URL, prefix: c.Prefix, dir: c.StepDir, every: c.Every,
		timeout: c.Timeout, log: c.Log, stop: make(chan struct{})}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.log == nil {
		s.log = io.Discard
	}
	t := c.Transport
	if t == nil {
		t = &http.Transport{DisableKeepAlives: true}
	}
	s.client = &http.Client{Transport: t, Timeout: s.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return s
}

// WindowStart scrapes the start edge, then every Every until StepDrained,
// all on a goroutine of its own.
func (s *Scraper) WindowStart(time.Time) {
	s.wg.Go(func() {
		s.scrape(context.Background(), schema.EdgeStart, "start")
		if s.every <= 0 {
			return
		}
		t := time.NewTicker(s.every)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.scrape(context.Background(), schema.EdgeDuring, fmt.Sprintf("%03d", n))
			}
		}
	})
}

// StepDrained stops the scrapes inside the window, waits for them and
// scrapes the end edge.
func (s *Scraper) StepDrained(ctx context.Context) {
	close(s.stop)
	s.wg.Wait()
	s.scrape(ctx, schema.EdgeEnd, "end")
}

// Record is what the step records of the scrapes.
func (s *Scraper) Record() *schema.ServerMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &schema.ServerMetrics{URL: logsafe.URL(s.url), EveryS: s.every.Seconds(),
		Scrapes: append([]schema.ServerScrape{}, s.scrapes...)}
}

// scrape takes one scrape and records it; name is the file's middle part.
func (s *Scraper) scrape(ctx context.Context, edge, name string) {
	at := time.Now()
	body, err := s.get(ctx)
	rec := schema.ServerScrape{At: at.UTC(), Edge: edge,
		DurationMS: float64(time.Since(at)) / float64(time.Millisecond)}
	if err == nil {
		path := s.prefix + "." + name + ".prom"
		if err = atomicfile.Write(path, FileMode, body, nil); err == nil {
			rec.File, rec.Bytes = s.rel(path), int64(len(body))
		}
	}
	if err != nil {
		rec.Error = err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrapes = append(s.scrapes, rec)
	if err != nil && rec.Error != s.lastErr {
		fmt.Fprintf(s.log, "loadstep: server metrics (%s scrape): %s (the step goes on; the scrape is recorded as failed)\n", edge, rec.Error)
		s.lastErr = rec.Error
	}
}

// get fetches the exposition text.
func (s *Scraper) get(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", Accept)
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL, without credentials, is said below
		}
		return nil, fmt.Errorf("scraping %s: %w", logsafe.URL(s.url), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: status %d, want 200", logsafe.URL(s.url), resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scraping %s: reading the body: %w", logsafe.URL(s.url), err)
	}
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("scraping %s: more than %d bytes", logsafe.URL(s.url), MaxBytes)
	}
	return body, nil
}

// rel is path relative to the step's directory, or path when it has none.
func (s *Scraper) rel(path string) string {
	dir, err1 := filepath.Abs(s.dir)
	abs, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return path
	}
	if r, err := filepath.Rel(dir, abs); err == nil {
		return r
	}
	return path
}
