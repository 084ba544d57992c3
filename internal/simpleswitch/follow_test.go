package simpleswitch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFollowRotation: the log follower reads every line across bmv2's log rotation (FILE.txt
// renamed FILE.1.txt, a new FILE.txt), the lines written to the old file before the rename
// too. Without it the differential test lost the log after 5 MB and timed out.
func TestFollowRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "switch.log")
	name := path + ".txt"
	s := &Switch{hosts: map[int]string{}, changed: make(chan struct{}), txWant: map[int]int{},
		rx: map[int][][]byte{}, exit: make(chan error, 1)}
	lines := func(n int, tag string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "[%s %d] Egress port is %d\n", tag, i, DropPort)
		}
		return b.String()
	}
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(lines(3, "a")); err != nil {
		t.Fatal(err)
	}
	go s.follow(path)
	defer func() { s.exit <- nil }()
	waitLines := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for s.LogLines() < want {
			if time.Now().After(deadline) {
				t.Fatalf("read %d log lines, want %d", s.LogLines(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitLines(3)
	// Two more lines, then the rotation, then the new file's lines.
	if _, err := f.WriteString(lines(2, "b")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Rename(name, path+".1.txt"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(lines(4, "c")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitLines(9)
	s.mu.Lock()
	got, tail := s.inIngress, strings.Join(s.logTail, "\n")
	s.mu.Unlock()
	if got != -9 || !strings.Contains(tail, "[b 1]") || !strings.HasSuffix(tail, "[c 3] Egress port is 511") {
		t.Errorf("inIngress %d (want -9), lines:\n%s", got, tail)
	}
}

// TestShortFrameFromLog: a frame shorter than an Ethernet header, which cannot cross a veth
// pair, counts as received with the bytes simple_switch logged (--dump-packet-data); a longer
// one, and one for a port without a veth, only as the log says it was sent.
func TestShortFrameFromLog(t *testing.T) {
	s := &Switch{hosts: map[int]string{1: "h1"}, changed: make(chan struct{}), txWant: map[int]int{},
		rx: map[int][][]byte{}, exit: make(chan error, 1)}
	for _, l := range []string{
		"[12.0] [cxt 0] Transmitting packet of size 4 out of port 1",
		"[bmv2] [I] [thread 1] Sending packet of length 4 on port 1: 0607aabb",
		"[12.0] [cxt 0] Transmitting packet of size 20 out of port 1",
		"[bmv2] [I] [thread 1] Sending packet of length 20 on port 1: 0607aabbccddeeff0011223344556677",
		"[bmv2] [I] [thread 1] Sending packet of length 2 on port 9: 0607",
	} {
		s.line(l)
	}
	if got := s.rx[1]; len(got) != 1 || fmt.Sprintf("%X", got[0]) != "0607AABB" {
		t.Errorf("received %X, want the 4-byte frame 0607AABB alone", got)
	}
	if s.txWant[1] != 2 || len(s.rx[9]) != 0 {
		t.Errorf("txWant %v, rx on port 9 %X", s.txWant, s.rx[9])
	}
}
