package engine

import "testing"

// BenchmarkTNARegister runs a TNA packet through the six blocks with one register action
// (a RegisterAction incrementing a cell) in the ingress: the per-pass cost of a TNA program.
func BenchmarkTNARegister(b *testing.B) {
	benchTNARegister(b, Config{})
}

func benchTNARegister(b *testing.B, cfg Config) { benchTNARegisterOn(b, cfg, 1) }

func benchTNARegisterOn(b *testing.B, cfg Config, port int) {
	src := tnaSrc{igDecls: regDecls, igBody: `
        hdr.reg.rv = inc.execute(hdr.reg.idx);`}
	sw, err := loadTNA(b, src.text(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	pkt := regPkt(1, 5, 0)
	if res, err := sw.Process(port, pkt); err != nil || len(res.Out) != 1 || res.Out[0].Port != port {
		b.Fatalf("%v %v", res, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sw.Process(port, pkt)
	}
}

// BenchmarkTNARegisterPipe1 is BenchmarkTNARegister on a chip of two pipes, the packet in and
// out of port 129 (pipe 1): the pipe changes twice a packet (into pipe 1, back to 0).
func BenchmarkTNARegisterPipe1(b *testing.B) {
	benchTNARegisterOn(b, Config{Pipes: 2}, 129)
}
