package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/wire"
	"github.com/netlock-go/netlock/wire/layer"
)

// TestCaptureLockServerTraffic captures real traffic between the load generator and the lock
// server on the loopback interface (AF_PACKET, so root), writes it to a pcap file, and checks that
// every captured datagram decodes with the gopacket layer and with the Wireshark dissector
// (tshark). Without root or tshark it fails under CI and skips elsewhere. The server listens on a free
// port rather than 8888 (other programs on the machine may hold 8888), so decoding is asked for
// explicitly (gopacket: LayerTypeNetLock on the UDP payload; tshark: -d udp.port==P,netlock).
func TestCaptureLockServerTraffic(t *testing.T) {
	testenv.RequireRoot(t, "packet capture on lo (an AF_PACKET socket)")
	h, err := pcapgo.NewEthernetHandle("lo")
	if err != nil {
		testenv.Unavailable(t, "packet capture on lo: %v", err)
	}
	addr, stop, err := startLockServer(context.Background(), 1, false)
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	defer stop()
	port := layers.UDPPort(addr.Port())

	type frame struct {
		ci   gopacket.CaptureInfo
		data []byte
	}
	var (
		mu     sync.Mutex
		frames []frame
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			data, ci, err := h.ReadPacketData()
			if err != nil {
				return // closed
			}
			p := gopacket.NewPacket(data, layers.LinkTypeEthernet, gopacket.NoCopy)
			udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
			if udp == nil || (udp.SrcPort != port && udp.DstPort != port) {
				continue // someone else's loopback traffic
			}
			mu.Lock()
			if len(frames) < 4000 {
				frames = append(frames, frame{ci, bytes.Clone(data)})
			}
			mu.Unlock()
		}
	}()
	var res LoadResult
	untilProgress(t, func(d time.Duration) bool {
		res, err = RunLoad(context.Background(), LoadConfig{Target: addr, Workers: 1, Outstanding: 2,
			Duration: d / 2, LockBase: uint32(d / time.Millisecond), Mode: wire.Exclusive})
		if err != nil {
			t.Fatal(err)
		}
		return res.Pairs > 0
	})
	time.Sleep(50 * time.Millisecond) // let the last answers reach the capture
	h.Close()
	wg.Wait()
	checkLoad(t, res)

	path := filepath.Join(t.TempDir(), "lockserver.pcap")
	var buf bytes.Buffer
	pw := pcapgo.NewWriter(&buf)
	if err := pw.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := pw.WritePacket(f.ci, f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	// Read the file back and decode every datagram as netlock.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	n := 0
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		n++
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if udp == nil {
			t.Fatalf("packet %d: no UDP layer: %v", n, p)
		}
		np := gopacket.NewPacket(udp.Payload, layer.TypeNetLock, gopacket.Default)
		if el := np.ErrorLayer(); el != nil {
			t.Fatalf("packet %d: %v", n, el.Error())
		}
		l := np.Layer(layer.TypeNetLock).(*layer.NetLock)
		key := l.Op.String()
		if l.Flags&wire.FlagReply != 0 {
			key += "+reply"
		}
		seen[key]++
	}
	if n == 0 {
		t.Fatal("captured nothing")
	}
	for _, k := range []string{"acquire", "grant", "release", "release+reply"} {
		if seen[k] == 0 {
			t.Fatalf("no %s among %d captured packets: %v", k, n, seen)
		}
	}
	t.Logf("captured %d datagrams: %v", n, seen)

	// The Wireshark dissector decodes the same capture.
	testenv.RequireTool(t, "tshark", "apt-get install -y tshark")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "tshark", "-n", "-X", "lua_script:"+filepath.Join("..", "..", "wire", "wireshark", "netlock.lua"),
		"-d", "udp.port=="+strconv.Itoa(int(port))+",netlock", "-r", path,
		"-T", "fields", "-e", "netlock.op", "-e", "_ws.expert.message").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("tshark printed %d lines for %d packets", len(lines), n)
	}
	for i, line := range lines {
		op, expert, _ := strings.Cut(line, "\t")
		// Wireshark's UDP dissector flags ports in traceroute's range (33434-33534), where the
		// kernel sometimes puts the server's random port; that note is not the dissector's.
		if strings.HasPrefix(expert, "Possible traceroute") {
			expert = ""
		}
		if op == "" || expert != "" {
			t.Fatalf("tshark, packet %d: op %q, expert %q", i+1, op, expert)
		}
	}
}
