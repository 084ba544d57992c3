package client

import (
	"slices"
	"testing"

	"github.com/netlock-go/netlock/wire"
)

// TestOrderLocks: ascending lock ids, each lock once, exclusive if any asked for it exclusive.
func TestOrderLocks(t *testing.T) {
	S, X := wire.Shared, wire.Exclusive
	got := OrderLocks([]LockSpec{{9, S}, {3, S}, {9, X}, {1, X}, {3, S}, {5, X}, {5, S}})
	want := []LockSpec{{1, X}, {3, S}, {5, X}, {9, X}}
	if !slices.Equal(got, want) {
		t.Errorf("OrderLocks = %v, want %v", got, want)
	}
	if got := OrderLocks(nil); len(got) != 0 {
		t.Errorf("OrderLocks(nil) = %v", got)
	}
}
