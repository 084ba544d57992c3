package p4rt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// faultyDevice is a MemDevice whose table deletes and register reads fail while armed: the
// undo of an insert is a delete, and the undo capture of a register write is a read.
type faultyDevice struct {
	*MemDevice
	mu                      sync.Mutex
	failDelete, failRegRead bool
}

var errInjected = errors.New("injected device failure")

func (d *faultyDevice) DeleteTableEntry(e *p4v1.TableEntry) error {
	d.mu.Lock()
	fail := d.failDelete
	d.mu.Unlock()
	if fail {
		return errInjected
	}
	return d.MemDevice.DeleteTableEntry(e)
}

func (d *faultyDevice) Register(id uint32, i int64) (*p4v1.P4Data, error) {
	d.mu.Lock()
	fail := d.failRegRead
	d.mu.Unlock()
	if fail {
		return nil, errInjected
	}
	return d.MemDevice.Register(id, i)
}

func (d *faultyDevice) arm(del, reg bool) {
	d.mu.Lock()
	d.failDelete, d.failRegRead = del, reg
	d.mu.Unlock()
}

// TestRollbackUndoFails: when ROLLBACK_ON_ERROR cannot undo an applied update (the device
// refuses the undo, or the state before the update could not be read), the Write says so: that
// update's detail is INTERNAL with the reason instead of ABORTED, the RPC message says the
// rollback is incomplete, the server logs it, and the device indeed keeps the update.
func TestRollbackUndoFails(t *testing.T) {
	dev := &faultyDevice{MemDevice: NewMemDevice()}
	var logMu sync.Mutex
	var logs []string
	srv, err := NewServer(Config{DeviceID: devID, Device: dev, Logf: func(format string, args ...any) {
		logMu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		logMu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := Serve("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	e := &env{t: t, dev: dev.MemDevice, srv: srv, addr: addr.String()}
	c := e.primaryWithPipeline()
	ctx := context.Background()
	n := names{srv.Pipeline().P4Info}
	dmac, fwd := n.table("MyIngress.dmac"), n.action("MyIngress.forward")
	reg := n.id("register", "MyIngress.seen")
	entry := func(m byte) *p4v1.TableEntry {
		return &p4v1.TableEntry{TableId: dmac, Match: []*p4v1.FieldMatch{exact(1, mac(m)...)}, Action: act(fwd, []byte{1})}
	}
	write := func(us ...*p4v1.Update) error {
		_, err := c.Write(ctx, &p4v1.WriteRequest{DeviceId: devID, ElectionId: c.eid,
			Atomicity: p4v1.WriteRequest_ROLLBACK_ON_ERROR, Updates: us})
		return err
	}
	if err := write(upd(p4v1.Update_INSERT, entry(1))); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name        string
		del, regRd  bool
		wantReason  string // in the INTERNAL detail of update 1
		wantEntry2  bool   // entry 2 stays in the device
		wantLogged  bool
		wantMessage string // in the RPC's message
	}{
		{"undo refused", true, false, "delete the inserted entry of table", true, true, "rollback incomplete: 1 applied updates"},
		{"previous state unreadable", false, true, "could not be read", false, true, "rollback incomplete: 1 applied updates"},
		// The control: nothing fails, everything is rolled back and ABORTED.
		{"undo works", false, false, "", false, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			logMu.Lock()
			logs = nil
			logMu.Unlock()
			dev.arm(tt.del, tt.regRd)
			err := write(
				upd(p4v1.Update_MODIFY, &p4v1.RegisterEntry{RegisterId: reg, Index: &p4v1.Index{Index: 0},
					Data: &p4v1.P4Data{Data: &p4v1.P4Data_Bitstring{Bitstring: []byte{7}}}}),
				upd(p4v1.Update_INSERT, entry(2)),
				upd(p4v1.Update_INSERT, entry(1)), // fails: ALREADY_EXISTS
			)
			dev.arm(false, false)
			st := status.Convert(err)
			errs := UpdateErrors(err)
			if len(errs) != 3 || errs[2].Code() != codes.AlreadyExists {
				t.Fatalf("errors %v (%v)", errs, err)
			}
			if tt.wantMessage != "" && !strings.Contains(st.Message(), tt.wantMessage) {
				t.Errorf("message %q lacks %q", st.Message(), tt.wantMessage)
			}
			if tt.wantMessage == "" && strings.Contains(st.Message(), "rollback incomplete") {
				t.Errorf("message %q, want a complete rollback", st.Message())
			}
			failed := 0
			for i, want := range []bool{tt.regRd, tt.del} {
				switch {
				case want && (errs[i].Code() != codes.Internal || !strings.Contains(errs[i].Message(), "could not undo")):
					t.Errorf("update %d: %v, want INTERNAL saying the undo failed", i, errs[i])
				case !want && errs[i].Code() != codes.Aborted:
					t.Errorf("update %d: %v, want ABORTED", i, errs[i])
				}
				if want {
					failed++
					if !strings.Contains(errs[i].Message(), tt.wantReason) || !strings.Contains(errs[i].Message(), errInjected.Error()) {
						t.Errorf("update %d: %q lacks %q and the device's error", i, errs[i].Message(), tt.wantReason)
					}
				}
			}
			_, getErr := dev.TableEntry(entry(2))
			if has := getErr == nil; has != tt.wantEntry2 {
				t.Errorf("entry 2 in the device: %v, want %v", has, tt.wantEntry2)
			}
			if tt.wantEntry2 {
				if err := write(upd(p4v1.Update_DELETE, entry(2))); err != nil {
					t.Fatal(err)
				}
			}
			logMu.Lock()
			var undoLogs int
			for _, l := range logs {
				if strings.Contains(l, "undo failed") {
					undoLogs++
				}
			}
			logMu.Unlock()
			if undoLogs != failed {
				t.Errorf("%d undo failures logged, want %d: %q", undoLogs, failed, logs)
			}
		})
	}
}
