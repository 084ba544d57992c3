package p4rt

import (
	"fmt"
	"net"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
)

// DefaultAddr is where simple_switch_grpc listens by default.
const DefaultAddr = "0.0.0.0:9559"

// Listener is implemented by Server (for the Device).
var _ Listener = (*Server)(nil)

// Serve starts a gRPC server for s on addr (host:port; port 0 picks one) and
// returns the address it listens on and a stop function that ends every RPC,
// waits for the handlers and closes s.
func Serve(addr string, s *Server, opts ...grpc.ServerOption) (net.Addr, func(), error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("p4rt: listen %s: %w", addr, err)
	}
	gs := grpc.NewServer(append([]grpc.ServerOption{grpc.WaitForHandlers(true)}, opts...)...)
	p4v1.RegisterP4RuntimeServer(gs, s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	stop := func() {
		gs.Stop()
		<-done
		s.Close()
	}
	return lis.Addr(), stop, nil
}
