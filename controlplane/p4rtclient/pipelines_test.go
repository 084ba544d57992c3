package p4rtclient

import (
	"context"
	"io"
	"strings"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
)

// foldClient is a client (no switch) resolving names with the P4Info of prog, a build of
// netlock's program at the default sizes.
func foldClient(t *testing.T, prog dataplane.Program) *Client {
	t.Helper()
	p, err := ProgramFromBundle(dpengine.BundleProgram(prog, dataplane.DefaultSizing))
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{}
	c.UseP4Info(p.P4Info)
	return c
}

// lockEntry is a lock table entry of netlock's programs.
func lockEntry(lock uint32) Entry {
	e := dataplane.LockEntry{Lock: lock, Index: 3, Server: 1,
		Regions: [dataplane.Levels]dataplane.Region{{Left: 0, Size: 2}, {Left: 2, Size: 2}}}
	name, args := e.Action()
	return Entry{Table: dataplane.TableLock, Match: []Match{Exact{Field: dataplane.KeyLock, Value: e.Match()}},
		Action: name, Params: params(dataplane.ParamsLockHit, args)}
}

func params(names []string, args [][]byte) []Param {
	ps := make([]Param, len(names))
	for i, n := range names {
		ps[i] = Param{Name: n, Value: args[i]}
	}
	return ps
}

// TestTableCopies: in the P4Info of the Tofino 1 fold (two Pipelines of one control), each
// table and meter has a copy per Pipeline, one name and the Pipeline's in the alias. A name
// resolves to both copies: TableUpdates and MeterUpdates build an update for each (distinct
// ids), TableUpdate and MeterUpdate refuse the name, and an alias names one copy. In the
// program of one Pipeline a name is one table, as before.
func TestTableCopies(t *testing.T) {
	c := foldClient(t, dataplane.TNAFold)
	ups, err := c.TableUpdates(Insert, lockEntry(7))
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 {
		t.Fatalf("%d updates, want one per Pipeline (2)", len(ups))
	}
	a, b := ups[0].Entity.GetTableEntry().GetTableId(), ups[1].Entity.GetTableEntry().GetTableId()
	if a == b || !strings.Contains(ups[0].What, "pipe_a.") || !strings.Contains(ups[1].What, "pipe_b.") {
		t.Errorf("the copies: ids %d and %d, %q and %q", a, b, ups[0].What, ups[1].What)
	}
	if _, err := c.TableUpdate(Insert, lockEntry(7)); err == nil || !strings.Contains(err.Error(), "TableUpdates") {
		t.Errorf("TableUpdate of a table with two copies: %v, want an error naming TableUpdates", err)
	}
	one := lockEntry(7)
	one.Table = "pipe_b." + dataplane.TableLock
	if u, err := c.TableUpdate(Insert, one); err != nil || u.Entity.GetTableEntry().GetTableId() != b {
		t.Errorf("by pipe_b's alias: %v, table id %d, want %d", err, u.Entity.GetTableEntry().GetTableId(), b)
	}
	ms, err := c.MeterUpdates(dataplane.MeterTenant, 5, Meter{CIR: 100, CBurst: 10, PIR: 100, PBurst: 10})
	if err != nil || len(ms) != 2 || ms[0].Entity.GetMeterEntry().GetMeterId() == ms[1].Entity.GetMeterEntry().GetMeterId() {
		t.Errorf("MeterUpdates: %v, %d updates", err, len(ms))
	}
	if _, err := c.MeterUpdate(dataplane.MeterTenant, 5, Meter{}); err == nil {
		t.Error("MeterUpdate of a meter with two copies: no error")
	}

	single := foldClient(t, dataplane.TNA)
	if ups, err := single.TableUpdates(Insert, lockEntry(7)); err != nil || len(ups) != 1 {
		t.Errorf("one Pipeline: %v, %d updates, want 1", err, len(ups))
	}
	if _, err := single.TableUpdate(Insert, lockEntry(7)); err != nil {
		t.Errorf("one Pipeline: TableUpdate: %v", err)
	}
}

// copiesRT answers Read with the table entries of each table id in entries.
type copiesRT struct {
	p4v1.P4RuntimeClient
	entries map[uint32][]*p4v1.TableEntry
}

func (f copiesRT) Read(_ context.Context, req *p4v1.ReadRequest, _ ...grpc.CallOption) (p4v1.P4Runtime_ReadClient, error) {
	var ents []*p4v1.Entity
	for _, te := range f.entries[req.GetEntities()[0].GetTableEntry().GetTableId()] {
		ents = append(ents, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}})
	}
	return &readStream{resp: &p4v1.ReadResponse{Entities: ents}}, nil
}

type readStream struct {
	p4v1.P4Runtime_ReadClient
	resp *p4v1.ReadResponse
}

func (s *readStream) Recv() (*p4v1.ReadResponse, error) {
	if s.resp == nil {
		return nil, io.EOF
	}
	r := s.resp
	s.resp = nil
	return r, nil
}

// TestReadEntriesCopies: ReadEntries of a table with a copy per Pipeline lists each entry once
// and counts the packets it matched in every copy (3 in pipe_a's, 4 in pipe_b's: 7); an entry
// only one copy has is listed too.
func TestReadEntriesCopies(t *testing.T) {
	c := foldClient(t, dataplane.TNAFold)
	ups, err := c.TableUpdates(Insert, lockEntry(7))
	if err != nil {
		t.Fatal(err)
	}
	only, err := c.TableUpdates(Insert, lockEntry(9))
	if err != nil {
		t.Fatal(err)
	}
	withCount := func(u Update, n int64) *p4v1.TableEntry {
		te := u.Entity.GetTableEntry()
		te.CounterData = &p4v1.CounterData{PacketCount: n}
		return te
	}
	a, b := ups[0].Entity.GetTableEntry().GetTableId(), ups[1].Entity.GetTableEntry().GetTableId()
	c.rt = &rtClient{P4RuntimeClient: copiesRT{entries: map[uint32][]*p4v1.TableEntry{
		a: {withCount(ups[0], 3)},
		b: {withCount(ups[1], 4), withCount(only[1], 2)},
	}}}
	ens, counts, err := c.ReadEntries(context.Background(), dataplane.TableLock)
	if err != nil {
		t.Fatal(err)
	}
	if len(ens) != 2 || len(counts) != 2 {
		t.Fatalf("%d entries, %d counts, want 2 and 2", len(ens), len(counts))
	}
	for i, e := range ens {
		le, err := dataplane.ParseLockEntry(e.Match[0].(Exact).Value, e.Action, [][]byte{e.Params[0].Value, e.Params[1].Value,
			e.Params[2].Value, e.Params[3].Value, e.Params[4].Value, e.Params[5].Value})
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint32]uint64{7: 7, 9: 2}[le.Lock]
		if counts[i] != want {
			t.Errorf("lock %d: %d packets, want %d (the copies' sum)", le.Lock, counts[i], want)
		}
	}
}
