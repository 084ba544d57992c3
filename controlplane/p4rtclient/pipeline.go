package p4rtclient

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"

	"github.com/netlock-go/netlock/bmv2/p4rt"
	p4infotext "github.com/netlock-go/netlock/internal/p4info"
)

// Program is a P4 program ready to push: its device config (netlock's P4 source bundle, or a
// compiler's output for another target) and its P4Info.
type Program struct {
	DeviceConfig []byte
	P4Info       *p4configv1.P4Info
	P4InfoText   []byte
}

// LoadProgram reads a P4 program and every other .p4 file of its directory (the files it may
// #include) into a source bundle, and checks it with netlock's front end to produce its P4Info.
// The software switch (netlock switch) compiles the bundle it is sent (docs/p4.md).
func LoadProgram(path string) (*Program, error) {
	dir, main := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	var others []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".p4") && e.Name() != main {
			others = append(others, e.Name())
		}
	}
	p, err := ProgramFromFS(os.DirFS(dir), main, others...)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return p, nil
}

// ProgramFromFS builds a Program from the files of fsys (an embed.FS, say): main is the program,
// others the files it may #include.
func ProgramFromFS(fsys fs.FS, main string, others ...string) (*Program, error) {
	b, err := p4rt.BundleFromFS(fsys, main, others...)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	prog, err := b.Compile()
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", main, err)
	}
	info, err := prog.P4Info()
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", main, err)
	}
	text, err := prog.P4InfoText()
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", main, err)
	}
	return &Program{DeviceConfig: b.Encode(), P4Info: info, P4InfoText: []byte(text)}, nil
}

// ProgramFromBundle builds a Program from a P4 source bundle (dpengine.Bundle: netlock.p4
// with its sizes), checking it with the front end for its P4Info.
func ProgramFromBundle(b *p4rt.Bundle) (*Program, error) {
	prog, err := b.Compile()
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", b.Main(), err)
	}
	info, err := prog.P4Info()
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", b.Main(), err)
	}
	text, err := prog.P4InfoText()
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", b.Main(), err)
	}
	return &Program{DeviceConfig: b.Encode(), P4Info: info, P4InfoText: []byte(text)}, nil
}

// LoadCompiled reads a program compiled for another target: a device config file (for bmv2,
// the JSON p4c-bm2-ss writes) and its P4Info in text format.
func LoadCompiled(deviceConfig, p4info string) (*Program, error) {
	dc, err := os.ReadFile(deviceConfig)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	text, err := os.ReadFile(p4info)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	info, err := p4infotext.Unmarshal(text)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %s: %w", p4info, err)
	}
	return &Program{DeviceConfig: dc, P4Info: info, P4InfoText: text}, nil
}

// SetPipeline installs prog on the switch (SetForwardingPipelineConfig, VERIFY_AND_COMMIT:
// the switch's tables start empty) with the given cookie, and makes prog's P4Info the one the
// client resolves names with. The cookie identifies this installation: a switch that restarts
// loses it, which Pipeline shows. It must be > 0.
func (c *Client) SetPipeline(ctx context.Context, prog *Program, cookie uint64) error {
	if cookie == 0 {
		return fmt.Errorf("controlplane: pipeline cookie 0: use a cookie > 0 (0 reads as no pipeline): %w", ErrConfig)
	}
	if c.State() == Closed {
		return ErrClosed
	}
	// The request carries prog.P4Info as parsed (p4info.Unmarshal keeps the fields of P4Runtime
	// 1.4.0 that the project's messages lack, such as initial_default_action, and sends them
	// on); the client library would parse P4InfoText again with those messages, which refuse
	// them.
	req := &p4v1.SetForwardingPipelineConfigRequest{
		DeviceId:   c.cfg.DeviceID,
		ElectionId: &p4v1.Uint128{High: c.cfg.ElectionID.High, Low: c.cfg.ElectionID.Low},
		Role:       c.cfg.Role,
		Action:     p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT,
		Config: &p4v1.ForwardingPipelineConfig{
			P4Info:         prog.P4Info,
			P4DeviceConfig: prog.DeviceConfig,
			Cookie:         &p4v1.ForwardingPipelineConfig_Cookie{Cookie: cookie},
		},
	}
	if _, err := c.rt.SetForwardingPipelineConfig(ctx, req); err != nil {
		return &WriteError{Op: p4v1.Update_MODIFY, Entity: "forwarding pipeline", Code: codeOf(err), Message: messageOf(err), Err: err}
	}
	// The client library resolves names (P4RT's helpers) with the P4Info it last read.
	if _, err := c.p4.GetFwdPipe(ctx, client.GetFwdPipeP4InfoAndCookie); err != nil {
		return fmt.Errorf("controlplane: pipeline installed, reading it back: %w", err)
	}
	c.setSchema(prog.P4Info)
	c.log.Info("p4runtime: pipeline installed", "cookie", cookie)
	return nil
}

// PipelineInfo is what the switch reports of its pipeline.
type PipelineInfo struct {
	Cookie uint64
	P4Info *p4configv1.P4Info // only from LoadPipeline
}

// Pipeline asks the switch for its pipeline's cookie; it returns nil when the switch has no
// pipeline (it just started, or restarted and lost it).
func (c *Client) Pipeline(ctx context.Context) (*PipelineInfo, error) {
	return c.getPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY)
}

// LoadPipeline adopts the P4Info of the pipeline installed on the switch (a backup that takes
// over, a controller that restarts) and returns it with its cookie; nil if there is none.
func (c *Client) LoadPipeline(ctx context.Context) (*PipelineInfo, error) {
	pi, err := c.getPipeline(ctx, p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE)
	if err != nil || pi == nil {
		return pi, err
	}
	if pi.P4Info == nil {
		return nil, fmt.Errorf("controlplane: the switch reported cookie %d but no P4Info", pi.Cookie)
	}
	c.setSchema(pi.P4Info)
	return pi, nil
}

// UseP4Info makes info the P4Info the client resolves names with, without asking the switch.
func (c *Client) UseP4Info(info *p4configv1.P4Info) {
	c.setSchema(info)
}

func (c *Client) getPipeline(ctx context.Context, what p4v1.GetForwardingPipelineConfigRequest_ResponseType) (*PipelineInfo, error) {
	if c.State() == Closed {
		return nil, ErrClosed
	}
	resp, err := c.rt.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: c.cfg.DeviceID, ResponseType: what})
	if status.Code(err) == codes.FailedPrecondition {
		// PI's P4Runtime server (bmv2's simple_switch_grpc) answers FAILED_PRECONDITION "No
		// forwarding pipeline config set for this device" where netlock switch answers an empty
		// config: both mean no pipeline.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("controlplane: get pipeline: %w", err)
	}
	cfg := resp.GetConfig()
	if cfg.GetCookie() == nil && cfg.GetP4Info() == nil {
		return nil, nil
	}
	return &PipelineInfo{Cookie: cfg.GetCookie().GetCookie(), P4Info: cfg.GetP4Info()}, nil
}

func (c *Client) setSchema(info *p4configv1.P4Info) {
	s := newSchema(info)
	c.mu.Lock()
	c.sch = s
	c.mu.Unlock()
}

// Arch is the architecture of the client's pipeline, its P4Info's pkg_info.arch ("v1model",
// "tna", "t2na"; "" if the P4Info names none), or ErrNoPipeline.
func (c *Client) Arch() (string, error) {
	sch, err := c.schema()
	if err != nil {
		return "", err
	}
	return sch.info.GetPkgInfo().GetArch(), nil
}

func (c *Client) schema() (*schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sch == nil {
		return nil, ErrNoPipeline
	}
	return c.sch, nil
}
