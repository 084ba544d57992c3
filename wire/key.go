package wire

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Key is the rack key: the 64-bit secret that every control message carries in its trailer
// ([SetRackKey]; docs/protocol.md, "Who may send what"). 0 means no key: a receiver without a key
// refuses every control message. Its formatting methods never print the value, so that a key
// cannot end up in a log line or an error message by accident.
type Key uint64

// String returns "(set)" or "(none)", never the key.
func (k Key) String() string {
	if k == 0 {
		return "(none)"
	}
	return "(set)"
}

// Format prints k as String does, whatever the verb (%d and %x included).
func (k Key) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// LogValue keeps the key out of structured logs.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// ParseKey reads a key written as 16 hexadecimal digits (an optional 0x prefix, and surrounding
// white space, allowed). The zero key is refused: it means "no key". Errors never contain the
// text.
func ParseKey(s string) (Key, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	if len(t) != 16 {
		return 0, fmt.Errorf("rack key: want 16 hexadecimal digits, got %d characters", len(t))
	}
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("rack key: not hexadecimal")
	}
	if v == 0 {
		return 0, fmt.Errorf("rack key: the zero key is not a key")
	}
	return Key(v), nil
}
