package p4info

import "testing"

// TestInPipeline: an object's own name, or its copy under one Pipeline's prefix; not a longer
// path, another object, or a prefix alone.
func TestInPipeline(t *testing.T) {
	for _, c := range []struct {
		full, name string
		want       bool
	}{
		{"Ing.tag_t", "Ing.tag_t", true},
		{"pa.Ing.tag_t", "Ing.tag_t", true},
		{"x.pa.Ing.tag_t", "Ing.tag_t", false},
		{"pa.Ing.tag_u", "Ing.tag_t", false},
		{"pa.Ing", "Ing.tag_t", false},
		{"Ing.tag_t", "pa.Ing.tag_t", false},
	} {
		if got := InPipeline(c.full, c.name); got != c.want {
			t.Errorf("InPipeline(%q, %q) = %v, want %v", c.full, c.name, got, c.want)
		}
	}
}
