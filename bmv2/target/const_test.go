package target

import (
	"errors"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// TestConstEntries reads a table's const entries back from the engine in
// canonical P4Runtime form (wildcards left out) and refuses writes to it.
func TestConstEntries(t *testing.T) {
	prog, err := front.Load("testdata/const.p4")
	if err != nil {
		t.Fatal(err)
	}
	d := New(Options{})
	if err := d.LoadProgram(prog); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	tbl, err := d.sw.Table("t")
	d.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	var got []*p4v1.TableEntry
	if err := d.TableEntries(tbl.ID, func(e *p4v1.TableEntry) bool {
		got = append(got, e)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	// Entry 1: a == 1, b ternary 0x0100/0xff00, c's full range left out.
	// Entry 2: a == 2, b's wildcard left out, c in 5..9. Both with their
	// action data in canonical form; the first entry comes first.
	want := []*p4v1.TableEntry{
		{Match: []*p4v1.FieldMatch{
			{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{1}}}},
			{FieldId: 2, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: []byte{1, 0}, Mask: []byte{0xff, 0}}}},
		}},
		{Match: []*p4v1.FieldMatch{
			{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{2}}}},
			{FieldId: 3, FieldMatchType: &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: []byte{5}, High: []byte{9}}}},
		}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d const entries, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		// The priorities are the engine's; compare the match and the action data.
		e := got[i]
		if !proto.Equal(&p4v1.TableEntry{Match: e.Match}, &p4v1.TableEntry{Match: w.Match}) {
			t.Errorf("entry %d: match %v, want %v", i, e.Match, w.Match)
		}
		params := e.GetAction().GetAction().GetParams()
		if len(params) != 1 || params[0].GetParamId() != 1 || string(params[0].GetValue()) != string([]byte{byte(i + 2)}) {
			t.Errorf("entry %d: action params %v, want port %d", i, params, i+2)
		}
		// TableEntry finds each by its key.
		key := &p4v1.TableEntry{TableId: tbl.ID, Match: e.Match, Priority: e.Priority}
		if _, err := d.TableEntry(key); err != nil {
			t.Errorf("entry %d: TableEntry: %v", i, err)
		}
	}
	ins := &p4v1.TableEntry{TableId: tbl.ID, Priority: 1, Match: []*p4v1.FieldMatch{
		{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{7}}}}}}
	if err := d.InsertTableEntry(ins); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("insert into a const table: %v", err)
	}
	if _, err := d.TableEntry(ins); !errors.Is(err, p4rt.ErrNotFound) {
		t.Fatalf("missing const entry: %v", err)
	}
}
