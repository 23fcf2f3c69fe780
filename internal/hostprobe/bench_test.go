package hostprobe

import "testing"

func BenchmarkRun(b *testing.B) {
	p := New()
	for b.Loop() {
		if _, err := p.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
