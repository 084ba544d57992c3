package citron

import "testing"

func BenchmarkSplitRange(b *testing.B) {
	for i := 0; i < b.N; i++ {
		l := uint64(i*7919) % (1 << 27)
		splitRange(11, l, l+4096, 2)
	}
}
