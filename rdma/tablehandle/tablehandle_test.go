package tablehandle

import "testing"

// fake is a Handle that only has a name (Held never calls a handle).
type fake string

func (fake) Lock(uint32, bool) error { return nil }
func (fake) Unlock(uint32) error     { return nil }

// Held keeps one exclusive handle and a stack of shared ones; Take on an empty side is nil.
func TestHeld(t *testing.T) {
	var l Held
	steps := []struct {
		op     string // "add" or "take"
		shared bool
		h      fake // added, or wanted from take ("" for nil)
	}{
		{"take", false, ""},
		{"take", true, ""},
		{"add", false, "x"},
		{"add", true, "s1"},
		{"add", true, "s2"},
		{"take", true, "s2"},
		{"take", false, "x"},
		{"take", false, ""},
		{"take", true, "s1"},
		{"take", true, ""},
	}
	for k, st := range steps {
		if st.op == "add" {
			l.Add(st.h, st.shared)
			continue
		}
		got := l.Take(st.shared)
		if st.h == "" {
			if got != nil {
				t.Fatalf("step %d: take(shared=%v) = %v, want nil", k, st.shared, got)
			}
		} else if got != Handle(st.h) {
			t.Fatalf("step %d: take(shared=%v) = %v, want %v", k, st.shared, got, st.h)
		}
	}
}
