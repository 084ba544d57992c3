package dataplane

import "testing"

func TestParseLockEntry(t *testing.T) {
	for _, e := range []LockEntry{
		{Lock: 7, Index: 3, Regions: [Levels]Region{{Left: 10, Size: 4}, {Left: 14, Size: 1}}, Server: 2},
		{Lock: 0xFFFFFF01, Index: 0, Regions: [Levels]Region{{Left: 0, Size: 1}, {Left: 1, Size: 1}}, Server: 1, Paused: true},
	} {
		name, args := e.Action()
		got, err := ParseLockEntry(e.Match(), name, args)
		if err != nil || got != e {
			t.Errorf("round trip of %+v: %+v, %v", e, got, err)
		}
		// Canonical byte strings (leading zeros dropped) and action suffixes parse too.
		var short [][]byte
		for _, a := range args {
			for len(a) > 1 && a[0] == 0 {
				a = a[1:]
			}
			short = append(short, a)
		}
		if got, err := ParseLockEntry([]byte{byte(e.Lock)}, name[len("NetlockIngress."):], short); err != nil ||
			got.Index != e.Index || got.Regions != e.Regions || got.Paused != e.Paused {
			t.Errorf("canonical form of %+v: %+v, %v", e, got, err)
		}
	}
	for _, bad := range []struct {
		action string
		args   [][]byte
	}{{ActionLockMiss, nil}, {ActionLockHit, [][]byte{{1}}}, {ActionLockHit, [][]byte{{1, 2, 3, 4, 5}, {}, {}, {}, {}, {}}}} {
		if _, err := ParseLockEntry([]byte{1}, bad.action, bad.args); err == nil {
			t.Errorf("%s %v parsed", bad.action, bad.args)
		}
	}
}
