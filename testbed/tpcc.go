package testbed

import (
	"math/rand/v2"
	"slices"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/wire"
)

// TPC-C-like lock sets. Only the locks of the two transactions that dominate TPC-C's mix and that
// DSLR and NetLock evaluate are generated: NewOrder and Payment. Lock ids encode the row:
//
//	bits 31..29  table (warehouse 1, district 2, customer 3, stock 4)
//	bits 28..22  warehouse (0..127)
//	bits 21..0   row within the warehouse (district d; customer d*3000+c; stock item i)
//
// Row choices follow the TPC-C specification (clause 2.4 and 2.5): NURand for customers and items,
// 5-15 order lines, 1% of order lines supplied by a remote warehouse, 15% of payments for a
// customer of a remote warehouse. Contention is set by the number of warehouses: DSLR and NetLock
// use one warehouse per client node for high contention and ten for low.
const (
	tableWarehouse = 1
	tableDistrict  = 2
	tableCustomer  = 3
	tableStock     = 4

	MaxWarehouses         = 128
	districtsPerWarehouse = 10
	customersPerDistrict  = 3000
	items                 = 100000
)

func tpccLock(table, w, row uint32) uint32 { return table<<29 | w<<22 | row }

// nuRand is TPC-C's non-uniform random function NURand(A, x, y) with run-time constant c.
func nuRand(rng *rand.Rand, a, x, y, c int) int {
	return ((rng.IntN(a+1)|(x+rng.IntN(y-x+1)))+c)%(y-x+1) + x
}

// tpccGen draws TPC-C-like transactions over a number of warehouses.
type tpccGen struct {
	rng        *rand.Rand
	warehouses int
	cID        int // NURand constant C for customer ids
	cItem      int
}

func newTPCCGen(seed uint64, warehouses int) *tpccGen {
	rng := rand.New(rand.NewPCG(seed, 0x7470636321))
	return &tpccGen{rng: rng, warehouses: warehouses, cID: rng.IntN(1024), cItem: rng.IntN(8192)}
}

func (g *tpccGen) otherWarehouse(w int) int {
	if g.warehouses == 1 {
		return w
	}
	o := g.rng.IntN(g.warehouses - 1)
	if o >= w {
		o++
	}
	return o
}

// next returns the lock set of one transaction and its kind ("neworder" or "payment"), with the
// 45:43 NewOrder:Payment ratio of the TPC-C mix renormalised to these two.
func (g *tpccGen) next(dst []client.LockSpec) ([]client.LockSpec, string) {
	dst = dst[:0]
	w := g.rng.IntN(g.warehouses)
	d := g.rng.IntN(districtsPerWarehouse)
	if g.rng.IntN(88) < 45 {
		// NewOrder: read warehouse (tax), update district (next order id), read customer,
		// update stock of every ordered item.
		c := nuRand(g.rng, 1023, 1, customersPerDistrict, g.cID) - 1
		dst = append(dst,
			client.LockSpec{Lock: tpccLock(tableWarehouse, uint32(w), 0), Mode: wire.Shared},
			client.LockSpec{Lock: tpccLock(tableDistrict, uint32(w), uint32(d)), Mode: wire.Exclusive},
			client.LockSpec{Lock: tpccLock(tableCustomer, uint32(w), uint32(d*customersPerDistrict+c)), Mode: wire.Shared})
		lines := 5 + g.rng.IntN(11)
		for len(dst) < 3+lines {
			item := nuRand(g.rng, 8191, 1, items, g.cItem) - 1
			sw := w
			if g.rng.IntN(100) == 0 {
				sw = g.otherWarehouse(w)
			}
			l := tpccLock(tableStock, uint32(sw), uint32(item))
			if !slices.ContainsFunc(dst[3:], func(s client.LockSpec) bool { return s.Lock == l }) {
				// Order lines name distinct items.
				dst = append(dst, client.LockSpec{Lock: l, Mode: wire.Exclusive})
			}
		}
		return dst, "neworder"
	}
	// Payment: update warehouse and district year-to-date, update the customer (15% remote).
	cw, cd := w, d
	if g.rng.IntN(100) < 15 {
		cw, cd = g.otherWarehouse(w), g.rng.IntN(districtsPerWarehouse)
	}
	c := nuRand(g.rng, 1023, 1, customersPerDistrict, g.cID) - 1
	dst = append(dst,
		client.LockSpec{Lock: tpccLock(tableWarehouse, uint32(w), 0), Mode: wire.Exclusive},
		client.LockSpec{Lock: tpccLock(tableDistrict, uint32(w), uint32(d)), Mode: wire.Exclusive},
		client.LockSpec{Lock: tpccLock(tableCustomer, uint32(cw), uint32(cd*customersPerDistrict+c)), Mode: wire.Exclusive})
	return dst, "payment"
}
