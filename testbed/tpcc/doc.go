// Package tpcc generates the lock requests of TPC-C transactions as NetLock (SIGCOMM '20, section
// 6) and DSLR (SIGMOD '18) ran them: a transaction is a list of (lock id, mode) with metadata
// (type, home warehouse, remote, rollback), drawn by a [Terminal] of a [Workload]. It also holds
// the switch-share analysis every TPC-C figure prints ([Share], [Allocate]).
//
// # The two profiles
//
// [Spec] (the default) follows the TPC-C specification (revision 5.11) for what a transaction
// reads and writes and the DSLR authors' lock generator for how it locks it:
//
//   - Inputs (clause 2): the mix 45/43/4/4/4 (New-Order, Payment, Order-Status, Delivery,
//     Stock-Level); NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y-x+1)) + x with one
//     C per field per run, shared by every terminal (2.1.6): C_LAST (A = 255), C_ID (1023) and
//     OL_I_ID (8191), and C_LAST's run value differs from the value the customers' last names were
//     loaded with by 65..119, not 96 or 112 (2.1.6.1); a home warehouse per terminal (terminal i's
//     is i mod W) and a district per terminal for Stock-Level (2.8.1.1); New-Order: district
//     uniform, customer NURand(1023, 1, 3000), 5..15 order lines, items NURand(8191, 1, 100000),
//     each line supplied by a remote warehouse with probability 1%, 1% of orders with an unused
//     last item that rolls the transaction back (2.4.1); Payment: 15% for a customer of a remote
//     warehouse (any district), 60% by last name NURand(255, 0, 999) (2.5.1); Order-Status: 60%
//     by last name (2.6.1).
//   - Rows (clauses 2.4.2-2.8.2, 4.3.3): every row the transaction reads is locked shared, every
//     row it writes, inserts or deletes exclusive, one lock per row (NetLock replayed DSLR's
//     "noTableLock" traces: no table locks except the one below). New-Order: WAREHOUSE (S),
//     DISTRICT (X, D_NEXT_O_ID), CUSTOMER (S), the new ORDER and NEW-ORDER rows (X), and per line
//     ITEM (S), STOCK of the supplying warehouse (X) and the new ORDER-LINE (X). Payment:
//     WAREHOUSE and DISTRICT (X, the year-to-date sums), the customer (X; by last name every
//     customer of that name is read (S) and the middle one, n/2 rounded up, updated (X)) and a
//     new HISTORY row (X). Order-Status: the customer(s) (S), the customer's last ORDER and its
//     lines (S). Delivery: ten transactions, one per district (Txn.Part; the specification
//     lets the deferred Delivery commit after each district's order, clause 2.7.4, and DSLR's
//     Delivery is one district), each locking the district's oldest NEW-ORDER row (X), its ORDER
//     (X), its lines (X) and its customer (X). Stock-Level: DISTRICT (S, held, as DSLR does),
//     then the lines of the district's last 20 orders and the STOCK rows of their items, read
//     with Level 1 isolation (read committed, clause 3.4.1): they are Txn.Reads, each taken and
//     released on its own, about 390 requests that are not held to commit.
//   - DSLR's lock set (github.com/dongyoungy/rdma_2pc, src/new_proto4/tpcc_lock_gen.cc and its
//     .no_tablelock variant, which the "noTableLock" traces of NetLock's client code name) adds
//     one table lock that its no-table-lock variant keeps: New-Order and Delivery take the
//     NEW-ORDER table of their warehouse in intention-exclusive mode, which NetLock's client maps
//     to exclusive (dpdk_code/client_code/include/new_order.h: lock types 7 and 8 shared, 9
//     exclusive). It is kept here ([TableNewOrderTable], exclusive): a third hot lock per
//     warehouse next to WAREHOUSE and DISTRICT.
//   - Where the rows depend on database state a lock generator does not have, a fixed stand-in:
//     order o of a district belongs to customer o (the loaded ORDER table is a permutation of the
//     customers; a relabelling), a customer's last order is its loaded one, Delivery's oldest
//     new order of a district is one row per district (concurrent Deliveries of a district conflict
//     on it, as on the row they would both delete) and the order it delivers one of the loaded
//     undelivered ones (2101..3000), Stock-Level's last 20 orders are 20 consecutive loaded ones
//     from a random start (the real window moves with each New-Order of the district), new
//     orders and history rows get fresh row numbers (unique per terminal and sequence, hashed),
//     and a loaded order's line count and items are hashes of the run seed (5..15 lines, items
//     NURand-distributed). ITEM is one table for all warehouses (DSLR keeps a copy of its locks per
//     warehouse).
//
// [DSLRTrace] is DSLR's generator exactly as NetLock's traces recorded it, for the audit of the
// paper's figures: uniform draws (no NURand), one order line per order, two customers (and two
// history rows, X) for a Payment by last name and two customers and orders (S) for 40% of
// Order-Status, Delivery of one district, Stock-Level of one order line and stock row 0, and the
// warehouse drawn per transaction among all W (DSLR's local warehouse; its lock-manager node,
// which also carries Payment's remote customer, is not in the lock id NetLock's client sends).
// [DSLRNURand] is the same lock set with the specification's NURand draws of customers and items,
// for the audit (does skew alone explain the paper's switch share?).
//
// # Lock ids
//
// A lock id is table<<28 | warehouse<<21 | row ([LockID], [Decode]): tables 1..10, warehouses
// below 128, rows below 2^21. Ids are at least 2^28, above the microbenchmarks' ids.
//
// # Lock order
//
// [Ordered] (the default) lists a transaction's locks in ascending id, a global order: ordered
// two-phase locking cannot deadlock. [ClientOrder] lists them in the order the transaction's
// statements touch the rows, as the paper's clients took them; transactions can then deadlock,
// and each consumer has its own way out (docs/evaluation-tpcc.md): DSLR's waiters reset the lock
// after a lease and abort, DrTM never waits (a conflict aborts), NetLock's clients time out and
// retry, and this repository's client.Txn always takes locks in ascending order.
//
// A transaction's locks are distinct (a row locked twice is locked once, in the stronger mode,
// where it first appears).
package tpcc
