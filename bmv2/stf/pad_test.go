package stf

import (
	"bytes"
	"testing"
)

// TestPadFrame: RunReal's padding of frames too short for a veth pair, and its removal from
// the frames they cause.
func TestPadFrame(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		wantPad int
	}{
		{"empty", nil, 14},
		{"4 bytes", []byte{0xC8, 0x64, 0x70, 0x20}, 10},
		{"13 bytes", bytes.Repeat([]byte{1}, 13), 1},
		{"an Ethernet header", bytes.Repeat([]byte{1}, 14), 0},
		{"longer", bytes.Repeat([]byte{1}, 60), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, pad := padFrame(tc.in)
			if pad != tc.wantPad || len(got) < minFrame || !bytes.Equal(got[:len(tc.in)], tc.in) {
				t.Fatalf("padFrame(%X) = %X, %d; want pad %d", tc.in, got, pad, tc.wantPad)
			}
			if back := unpadFrame(got, pad); !bytes.Equal(back, tc.in) {
				t.Errorf("unpadFrame(%X, %d) = %X, want %X", got, pad, back, tc.in)
			}
		})
	}
	// A frame that does not end with the padding (the program parsed it or cut it) stays as it
	// is and fails its comparison.
	for _, f := range [][]byte{{1, 2, 0, 3}, {0, 0}, {1, 0, 0, 0, 1}} {
		if got := unpadFrame(f, 3); !bytes.Equal(got, f) {
			t.Errorf("unpadFrame(%X, 3) = %X, want it unchanged", f, got)
		}
	}
	if got := unpadFrame([]byte{7, 0, 0, 0}, 3); !bytes.Equal(got, []byte{7}) {
		t.Errorf("unpadFrame(07000000, 3) = %X, want 07", got)
	}
}

// TestCounterValue reads counter_read's answer in both formats, and refuses another.
func TestCounterValue(t *testing.T) {
	tests := []struct {
		out            string
		packets, bytes int64
		ok             bool
	}{
		{"NetlockIngress.nl_drops[3]= (150 bytes, 1 packets)\n", 1, 150, true},
		{"I.c[0]=  BmCounterValue(packets=7, bytes=420)", 7, 420, true},
		{"Invalid counter operation (INVALID_INDEX)", 0, 0, false},
	}
	for _, tc := range tests {
		p, b, err := counterValue(tc.out)
		if (err == nil) != tc.ok || p != tc.packets || b != tc.bytes {
			t.Errorf("counterValue(%q) = %d, %d, %v; want %d, %d, ok %v", tc.out, p, b, err, tc.packets, tc.bytes, tc.ok)
		}
	}
}
