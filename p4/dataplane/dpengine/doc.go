// Package dpengine holds netlock's switch programs (p4/dataplane's Program) built by this
// repository's P4 tool chain: checked by the front end with a sizing's macros (Check), packaged as
// a P4Runtime device config (Bundle), and loaded into the execution engine with the control
// interface as methods (Switch). Its tests run the programs on the engine: the STF scenarios,
// the differential tests against lockcore, the agreement of the two programs, the Tofino rules
// and the benchmarks.
//
// The data plane's vocabulary (table and action names, the control interface's values, admin
// packets, the sizing) is p4/dataplane, which builds without the engine, the front end or
// P4Runtime, so that the controller's pure core can use it.
package dpengine
