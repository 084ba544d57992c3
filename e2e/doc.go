// Package e2e holds netlock's end-to-end tests: lock clients and lock servers over UDP on
// loopback, with faults injected by faultnet and histories checked by history. It has no
// non-test code.
package e2e
