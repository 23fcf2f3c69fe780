package httpprobe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStatus: the status as answered, a redirect not followed, each ask
// on a new connection, no answer within the timeout an error.
func TestStatus(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/ready", http.StatusFound)
		case "/slow":
			time.Sleep(300 * time.Millisecond)
		case "/ready":
			w.Write([]byte(strings.Repeat("x", 100<<10)))
		}
	}))
	defer srv.Close()
	c := Client()
	for _, tt := range []struct {
		path string
		want int
	}{{"/ready", 200}, {"/moved", 302}, {"/ready", 200}} {
		if got, err := Status(context.Background(), c, srv.URL+tt.path, time.Second); err != nil || got != tt.want {
			t.Errorf("%s: %d, %v; want %d", tt.path, got, err, tt.want)
		}
	}
	mu.Lock()
	if len(conns) != 3 {
		t.Errorf("3 asks came on %d connections, want 3", len(conns))
	}
	mu.Unlock()
	if got, err := Status(context.Background(), nil, srv.URL+"/slow", 50*time.Millisecond); err == nil || got != 0 {
		t.Errorf("/slow within 50 ms: %d, %v; want 0 and an error", got, err)
	}
}
