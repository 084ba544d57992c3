package dataplane

// TNAQueueParts are the TNA program's registers that hold p4/netlock.p4's RegisterQueue, 16
// bits each, at their bit offsets there: occupied slots at level 0 and 1, requests buffered at
// the server, done slots.
var TNAQueueParts = []struct {
	Register string
	Shift    uint
}{{RegisterQueue, 0}, {RegisterQueueHigh, 16}, {RegisterBuffered, 32}, {RegisterDone, 48}}
