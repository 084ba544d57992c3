package p4rtclient

import (
	"context"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// pipelineRT answers GetForwardingPipelineConfig with err (the rest of the interface is unused).
type pipelineRT struct {
	p4v1.P4RuntimeClient
	err error
}

func (f pipelineRT) GetForwardingPipelineConfig(context.Context, *p4v1.GetForwardingPipelineConfigRequest,
	...grpc.CallOption) (*p4v1.GetForwardingPipelineConfigResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &p4v1.GetForwardingPipelineConfigResponse{Config: &p4v1.ForwardingPipelineConfig{}}, nil
}

// TestLoadPipelineNoPipeline: a switch without a pipeline is "no pipeline" (nil, nil) whether it
// says so as netlock switch does (an empty config) or as PI's server in bmv2's simple_switch_grpc
// does (FAILED_PRECONDITION "No forwarding pipeline config set for this device"); any other error
// stays an error (the controller retries it instead of programming the switch).
func TestLoadPipelineNoPipeline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		wantErr bool
	}{
		{"empty config", nil, false},
		{"PI's failed precondition", status.Error(codes.FailedPrecondition, "No forwarding pipeline config set for this device"), false},
		{"unavailable", status.Error(codes.Unavailable, "connection refused"), true},
		{"permission denied", status.Error(codes.PermissionDenied, "not primary"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{rt: &rtClient{P4RuntimeClient: pipelineRT{err: tc.err}}}
			pi, err := c.LoadPipeline(context.Background())
			if pi != nil || (err != nil) != tc.wantErr {
				t.Fatalf("LoadPipeline = %+v, %v; want nil and an error: %v", pi, err, tc.wantErr)
			}
		})
	}
}
