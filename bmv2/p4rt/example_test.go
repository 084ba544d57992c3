package p4rt_test

import (
	"log"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// A switch process serves P4Runtime for its device like this; a controller
// then arbitrates, pushes a P4 source bundle with its P4Info and writes
// entries. The engine's Device takes MemDevice's place.
func ExampleServe() {
	dev := p4rt.NewMemDevice()
	srv, err := p4rt.NewServer(p4rt.Config{DeviceID: 1, Device: dev, Logf: log.Printf})
	if err != nil {
		log.Fatal(err)
	}
	addr, stop, err := p4rt.Serve("127.0.0.1:0", srv)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	_ = addr // give this to the controller (simple_switch_grpc uses port 9559)
}
