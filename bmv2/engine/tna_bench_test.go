package engine

import "testing"

// BenchmarkTNARegister runs a TNA packet through the six blocks with one register action
// (a RegisterAction incrementing a cell) in the ingress: the per-pass cost of a TNA program.
func BenchmarkTNARegister(b *testing.B) {
	benchTNARegister(b, Config{})
}

func benchTNARegister(b *testing.B, cfg Config) {
	src := tnaSrc{igDecls: regDecls, igBody: `
        hdr.reg.rv = inc.execute(hdr.reg.idx);`}
	sw, err := loadTNA(b, src.text(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	pkt := regPkt(1, 5, 0)
	if res, err := sw.Process(1, pkt); err != nil || len(res.Out) != 1 {
		b.Fatalf("%v %v", res, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sw.Process(1, pkt)
	}
}
