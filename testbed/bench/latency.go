package bench

import "github.com/netlock-go/netlock/internal/latency"

// Histogram and Latency are the latency package's types, kept under their old names for the
// benchmarks' API and JSON.
type (
	Histogram = latency.Histogram
	Latency   = latency.Latency
)
