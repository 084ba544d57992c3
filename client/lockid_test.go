package client

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// TestLockIDVectors pins LockID forever: these values must never change (a changed mapping
// splits one lock into two between clients of different versions). They were computed
// independently with Python's hashlib (LockID's doc comment). The last two names hash into the
// reserved range and are lowered by 0x100.
func TestLockIDVectors(t *testing.T) {
	for _, v := range []struct {
		name string
		id   uint32
	}{
		{"", 0xe3b0c442},
		{"a", 0xca978112},
		{"orders/42", 0xc4dd165f},
		{"user:1001", 0x486bab3d},
		{"inventory/sku-000123", 0xccf285ae},
		{"résumé", 0xe9f7b5b6},
		{"name-36148667", 0xfffffe50}, // SHA-256 prefix 0xffffff50
		{"name-54448105", 0xfffffeb3}, // SHA-256 prefix 0xffffffb3
	} {
		if got := LockID(v.name); got != v.id {
			t.Errorf("LockID(%q) = %#x, want %#x", v.name, got, v.id)
		}
	}
}

// TestLockIDAvoidsReserved: the names whose hash falls in the reserved range get ids outside it,
// and the reserved range is still the one LockID avoids.
func TestLockIDAvoidsReserved(t *testing.T) {
	if wire.ReservedLockBase < lockIDReservedBase {
		t.Fatalf("the reserved range starts at %#x, below the %#x LockID avoids: LockID may return reserved ids",
			wire.ReservedLockBase, lockIDReservedBase)
	}
	for _, name := range []string{"name-36148667", "name-54448105"} {
		sum := sha256.Sum256([]byte(name))
		if h := binary.BigEndian.Uint32(sum[:4]); !wire.IsReservedLock(h) {
			t.Fatalf("%q hashes to %#x: not a reserved id, the test lost its case", name, h)
		}
		if id := LockID(name); wire.IsReservedLock(id) {
			t.Errorf("LockID(%q) = %#x: reserved", name, id)
		}
	}
}

// TestLockIDAcquire: a lock taken by name is the lock of its id, refused to a second holder.
func TestLockIDAcquire(t *testing.T) {
	s := newFakeServer(t, 10*time.Second)
	c := newClient(t, Config{Servers: []string{s.addr()}})
	ctx := testCtx(t)
	g, err := c.Acquire(ctx, LockID("orders/42"), wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	if g.Lock() != 0xc4dd165f {
		t.Errorf("lock %#x, want 0xc4dd165f", g.Lock())
	}
	if _, err := c.TryAcquire(context.Background(), LockID("orders/42"), wire.Exclusive); err == nil {
		t.Error("a second holder of orders/42 was granted")
	}
	if err := g.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
