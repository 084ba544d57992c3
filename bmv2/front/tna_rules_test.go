package front

import (
	"strings"
	"testing"
)

// TestTNAUnknownTableProperty: bf-p4c warns about a table property it does not know and ignores
// it; so does the front end for TNA programs (testdata/accept/tna_table_props.p4), while a
// v1model program still refuses one (testdata/reject/table_props.p4).
func TestTNAUnknownTableProperty(t *testing.T) {
	c, err := Load("testdata/accept/tna_table_props.p4")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Error(), "unknown table property some_vendor_hint") {
		t.Fatalf("warnings %v, want one for some_vendor_hint", c.Warnings)
	}
}
