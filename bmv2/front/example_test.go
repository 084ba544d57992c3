package front_test

import (
	"fmt"
	"log"

	"github.com/netlock-go/netlock/bmv2/front"
)

// Load checks a program; the result carries everything an execution engine needs. The table id
// is the one p4c gives MyIngress.ipv4_lpm (0x02 prefix, hash of the name).
func ExampleLoad() {
	prog, err := front.Load("testdata/accept/basic.p4")
	if err != nil {
		log.Fatal(err) // file:line:col: message, one per line
	}
	sw, err := prog.V1Switch()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ingress:", sw.Ingress.Name())
	for _, l := range sw.Ingress.Control.Locals {
		if t, ok := l.(*front.TableDecl); ok {
			for _, k := range t.Prop("key").Keys {
				fmt.Printf("table %s key %s: %s %s\n", t.Name, front.KeyName(k.Expr), k.Expr.Type(), k.MatchKind)
			}
		}
	}
	info, err := prog.P4Info()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s id %#x\n", info.Tables[0].Preamble.Name, info.Tables[0].Preamble.Id)
	// Output:
	// ingress: MyIngress
	// table ipv4_lpm key hdr.ipv4.dstAddr: bit<32> lpm
	// MyIngress.ipv4_lpm id 0x23a4cb4
}
