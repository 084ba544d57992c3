package gogroup

import (
	"sync/atomic"
	"testing"
)

func TestGroup(t *testing.T) {
	var g Group
	var ran atomic.Int32
	release := make(chan struct{})
	for i := 0; i < 3; i++ {
		if !g.Go(func() { <-release; ran.Add(1) }) {
			t.Fatal("open group refused a goroutine")
		}
	}
	if !g.Close() || g.Close() {
		t.Fatal("Close must report true once, then false")
	}
	if g.Go(func() { ran.Add(100) }) {
		t.Fatal("closed group started a goroutine")
	}
	close(release)
	g.Wait()
	if n := ran.Load(); n != 3 {
		t.Fatalf("%d goroutines ran to the end before Wait returned, want 3", n)
	}
}
