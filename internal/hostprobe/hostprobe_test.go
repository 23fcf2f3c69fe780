package hostprobe

import (
	"errors"
	"runtime"
	"testing"
)

// A run costs CPU time, and more work (the hash twice) costs more.
func TestRun(t *testing.T) {
	p := New()
	d, err := p.Run()
	if runtime.GOOS != "linux" {
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("Run on %s: err %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 {
		t.Errorf("a run took %v of CPU: want more than nothing", d)
	}
}

// New touches every page of the table, so the chase reads memory of its own.
func TestNewTouchesEveryPage(t *testing.T) {
	p := New()
	for i := pageWords; i < tableWords; i += pageWords {
		if p.tab[i] == 0 {
			t.Fatalf("page %d of the table never written", i/pageWords)
		}
	}
}
