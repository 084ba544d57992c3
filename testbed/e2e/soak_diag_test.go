package e2e

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The soak's frame trace (-soak.trace, on the switch path): every frame of a switch lock that
// enters or leaves the switch is recorded (port, direction, the NetLock header), and so is what
// the clients read; an acquisition abandoned at its time limit (-soak.op-timeout shortens it)
// prints the record of its (lock, txn), the lock's last frames, and the switch's probe of the
// lock. It found the causes of the switch soak's lost acquisitions (docs/reliability.md).
//
//	go test ./testbed/e2e -run '^TestSoak$' -soak.path switch -soak.switch-locks -soak.trace -soak.op-timeout 5s -v

type diagRec struct {
	at   time.Time
	port int
	dir  string
	f    wire.Fields
}

type diagTrace struct {
	mu   sync.Mutex
	recs map[uint32][]diagRec
	t0   time.Time
}

var soakDiag = &diagTrace{recs: map[uint32][]diagRec{}, t0: time.Now()}

// add records frame b on port (in or out) if it is a NetLock packet of a switch lock.
func (d *diagTrace) add(s *soakSwitch, port int, dir string, b []byte) {
	var fr udpframe.Frame
	if udpframe.Parse(b, &fr) != nil {
		return
	}
	h, err := wire.Parse(fr.Payload)
	if err != nil || !isSwitchLock(h.Lock(), s.locks) {
		return
	}
	r := diagRec{at: time.Now(), port: port, dir: dir}
	h.Decode(&r.f)
	d.mu.Lock()
	d.recs[r.f.Lock] = append(d.recs[r.f.Lock], r)
	d.mu.Unlock()
}

func (d *diagTrace) format(r diagRec) string {
	return fmt.Sprintf("  %9.4f port %3d %-3s %v", r.at.Sub(d.t0).Seconds(), r.port, r.dir, &r.f)
}

// lost prints what the switch saw of (lock, txn) and its state.
func (d *diagTrace) lost(s *soakSwitch, lock uint32, txn uint64, started time.Time) {
	var b strings.Builder
	fmt.Fprintf(&b, "DIAG lost acquisition lock %d txn %#x (started %.4f, now %.4f)\n", lock, txn,
		started.Sub(d.t0).Seconds(), time.Since(d.t0).Seconds())
	d.mu.Lock()
	recs := d.recs[lock]
	n := 0
	for _, r := range recs {
		if r.f.Txn == txn || (r.f.Op == wire.OpPushBack && r.f.Txn == 0) || r.f.Op == wire.OpQueueEmpty {
			if r.f.Txn == txn || r.at.After(started.Add(-time.Second)) {
				b.WriteString(d.format(r) + "\n")
				n++
			}
		}
		if n > 400 {
			b.WriteString("  ...\n")
			break
		}
	}
	fmt.Fprintf(&b, " the lock's last 60 frames:\n")
	for _, r := range recs[max(0, len(recs)-60):] {
		b.WriteString(d.format(r) + "\n")
	}
	d.mu.Unlock()
	head, err := s.admin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: lock})
	fmt.Fprintf(&b, " probe: %+v err %v\n", head, err)
	for lv := range dataplane.Levels {
		for off := range int(head.Used[lv]) {
			r, err := s.admin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: lock, Level: uint8(lv), Offset: uint16(off)})
			fmt.Fprintf(&b, "  slot L%d/%d: live %v txn %#x token %d now-gts %d lease %d err %v\n", lv, off, r.Live, r.Txn, r.Token,
				r.Now-r.GrantTime, r.Lease, err)
		}
	}
	fmt.Fprint(os.Stderr, b.String())
}

// diagLostHook, if set, is called for every lock of an acquisition abandoned at its time limit.
var diagLostHook func(lock uint32, txn uint64, started time.Time)

// diagConn records what a client reads and writes on its socket, after the faults.
type diagConn struct {
	net.PacketConn
	s    *soakSwitch
	name string
}

func (c diagConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, a, err := c.PacketConn.ReadFrom(p)
	if err == nil {
		soakDiag.addPayload(c.s, c.name+" read from "+a.String(), p[:n])
	}
	return n, a, err
}

func (d *diagTrace) addPayload(s *soakSwitch, dir string, b []byte) {
	h, err := wire.Parse(b)
	if err != nil || !isSwitchLock(h.Lock(), s.locks) {
		return
	}
	r := diagRec{at: time.Now(), port: -1, dir: dir}
	h.Decode(&r.f)
	d.mu.Lock()
	d.recs[r.f.Lock] = append(d.recs[r.f.Lock], r)
	d.mu.Unlock()
}
