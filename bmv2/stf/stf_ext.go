package stf

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/engine"
)

// Commands of ours beyond p4c's STF, for TNA programs:
//
//	port_metadata PORT HEX              the port metadata (phase 0 data, up to 8 bytes) the
//	                                    ingress parser sees for packets from PORT
//	expect_digest NAME [HEX ...]        the next digest the switch sends is NAME (a digest's
//	                                    control-plane name or a unique dotted suffix) with
//	                                    these field values, one HEX per field
//
// Digests are matched in order, over the whole test; in a test with expect_digest, at the
// end every expected digest must have been sent and no other (tests without it do not look
// at digests, as p4c's STF).

type digestExpect struct {
	line   int
	name   string
	fields [][]byte
}

type extState struct {
	digests  []engine.Digest
	expected []digestExpect
}

// received records the digests of one Process result (copied: the engine reuses them).
func (x *extState) received(r *engine.Result) {
	for _, d := range r.Digests {
		c := engine.Digest{Receiver: d.Receiver, Name: d.Name, ID: d.ID}
		for _, f := range d.Fields {
			c.Fields = append(c.Fields, append([]byte(nil), f...))
		}
		x.digests = append(x.digests, c)
	}
}

// command runs one of our commands; ok is false for an unknown command.
func (x *extState) command(sw *engine.Switch, c Command) (ok bool, err error) {
	switch c.Name {
	case "port_metadata":
		if len(c.Args) < 1 {
			return true, fmt.Errorf("port_metadata PORT HEX")
		}
		port, err := strconv.Atoi(c.Args[0])
		if err != nil {
			return true, fmt.Errorf("bad port %q", c.Args[0])
		}
		data, err := parseHex(strings.Join(c.Args[1:], ""))
		if err != nil {
			return true, err
		}
		return true, sw.SetPortMetadata(port, data)
	case "expect_digest":
		if len(c.Args) < 1 {
			return true, fmt.Errorf("expect_digest NAME [HEX ...]")
		}
		e := digestExpect{line: c.Line, name: c.Args[0]}
		for _, a := range c.Args[1:] {
			b, err := parseHex(a)
			if err != nil {
				return true, err
			}
			e.fields = append(e.fields, b)
		}
		x.expected = append(x.expected, e)
		return true, nil
	}
	return false, nil
}

// finish compares the digests sent with the expected ones.
func (x *extState) finish(res *Result) {
	if len(x.expected) == 0 {
		return
	}
	for i, e := range x.expected {
		if i >= len(x.digests) {
			res.Failures = append(res.Failures, fmt.Sprintf("line %d: expected digest %s, none sent", e.line, e.name))
			continue
		}
		d := x.digests[i]
		if d.Name != e.name && !strings.HasSuffix(d.Name, "."+e.name) {
			res.Failures = append(res.Failures, fmt.Sprintf("line %d: digest %d is %s, want %s", e.line, i+1, d.Name, e.name))
			continue
		}
		if len(d.Fields) != len(e.fields) {
			res.Failures = append(res.Failures, fmt.Sprintf("line %d: digest %s has %d fields, want %d", e.line, d.Name, len(d.Fields), len(e.fields)))
			continue
		}
		for k := range e.fields {
			if !bytes.Equal(d.Fields[k], e.fields[k]) {
				res.Failures = append(res.Failures, fmt.Sprintf("line %d: digest %s field %d is %X, want %X", e.line, d.Name, k+1, d.Fields[k], e.fields[k]))
			}
		}
	}
	for _, d := range x.digests[min(len(x.expected), len(x.digests)):] {
		res.Failures = append(res.Failures, fmt.Sprintf("unexpected digest %s %s", d.Name, listHex(d.Fields)))
	}
}
