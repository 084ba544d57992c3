package p4rtclient

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
)

// rtClient is the p4v1.P4RuntimeClient the library's client.Client is built on: every RPC goes
// to the generated gRPC client, except that StreamChannel opens the stream with the context
// of the current stream attempt (the library passes context.Background(), so only closing the
// connection could end its stream) and wraps it in a quietStream.
//
// Why: the library's stream reader logs every receive error with logrus at error level
// ("Failed to receive a stream message : ... client connection is closing", the line that
// `netlock p4 push` printed on exit), then blocks until its Run loop takes the error. A
// quietStream hands the real error to the Client's supervisor and gives the library io.EOF,
// on which its reader returns without logging; the supervisor then stops Run. The library
// logs nothing else on our paths, and logrus's global logger is left alone.
type rtClient struct {
	p4v1.P4RuntimeClient

	mu       sync.Mutex
	ctx      context.Context // the current stream attempt's context
	ended    chan error      // told once when the current stream ends, with why
	sendErrs *atomic.Uint64
}

// arm sets the context and the end notification of the next StreamChannel.
func (r *rtClient) arm(ctx context.Context, ended chan error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctx, r.ended = ctx, ended
}

// StreamChannel opens the stream for the armed attempt.
func (r *rtClient) StreamChannel(_ context.Context, opts ...grpc.CallOption) (p4v1.P4Runtime_StreamChannelClient, error) {
	r.mu.Lock()
	ctx, ended := r.ctx, r.ended
	r.mu.Unlock()
	s, err := r.P4RuntimeClient.StreamChannel(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return &quietStream{P4Runtime_StreamChannelClient: s, ended: ended, sendErrs: r.sendErrs}, nil
}

// quietStream reports the first receive error to ended and returns io.EOF in its place.
type quietStream struct {
	p4v1.P4Runtime_StreamChannelClient
	ended    chan error
	once     sync.Once
	sendErrs *atomic.Uint64
}

func (s *quietStream) Recv() (*p4v1.StreamMessageResponse, error) {
	m, err := s.P4Runtime_StreamChannelClient.Recv()
	if err != nil {
		s.once.Do(func() { s.ended <- err })
		return nil, io.EOF
	}
	return m, nil
}

// Send counts the errors the library ignores (the stream's end is seen by Recv).
func (s *quietStream) Send(m *p4v1.StreamMessageRequest) error {
	err := s.P4Runtime_StreamChannelClient.Send(m)
	if err != nil {
		s.sendErrs.Add(1)
	}
	return err
}
