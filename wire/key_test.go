package wire

import "testing"

// TestParseKey: 16 hexadecimal digits, an optional 0x and white space; never the zero key.
func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"6e65746c6f636b21", true}, {"0x6E65746C6F636B21\n", true}, {"6e65746c6f636b2", false},
		{"0000000000000000", false}, {"zz65746c6f636b21", false},
	} {
		if _, err := ParseKey(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseKey(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}
