package dpengine

import (
	"bytes"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// TestRawPacketOut: a frame the controller sends with a raw packet_out header
// (dataplane.RawPacketOut) leaves the port it names exactly as it was sent, on every program and
// pipeline; in the fold (the CPU port is pipe 1's) after half b steered it to pipe 0, whose half
// a must send it without the steering's headers and without the fold's bridge (it did not
// before either was fixed).
func TestRawPacketOut(t *testing.T) {
	frame := bytes.Repeat([]byte{0x5a}, 64)
	copy(frame, []byte{0x02, 0, 0, 0, 0, 0x07, 0x02, 0, 0, 0, 0, 0x08, 0x88, 0xb5})
	runs := append([]pipelineRun{}, pipelineRuns...)
	// the program of one Pipeline on a chip of two pipes: the CPU port (255) is pipe 1's, whose
	// copy of the program sends the frame out
	runs = append(runs, pipelineRun{"tna-2pipes", dataplane.TNA, engine.PipelineInterpreted})
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			tweak := func(*engine.Config) {}
			if run.name == "tna-2pipes" {
				tweak = func(c *engine.Config) { c.Pipes = 2 }
			}
			r := newRigWith(t, run.prog, dataplane.Sizing{Locks: 8, PartBits: 6}, nil, run.pl, tweak)
			res, err := r.sw.PacketOut(dataplane.RawPacketOut(nil, 5, frame))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Out) != 1 || res.Out[0].Port != 5 || !bytes.Equal(res.Out[0].Data, frame) {
				for _, o := range res.Out {
					t.Logf("out of port %d: % x", o.Port, o.Data)
				}
				t.Fatalf("%d packets out, want the frame out of port 5", len(res.Out))
			}
		})
	}
}
