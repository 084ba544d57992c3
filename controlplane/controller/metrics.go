package controller

import (
	"github.com/prometheus/client_golang/prometheus"
)

// collector exports the controller's counters, read from the last snapshot at scrape time.
type collector struct{ c *Controller }

var (
	descPhase     = prometheus.NewDesc("netlock_controller_phase", "The controller's phase: 0 backup, 1 taking over, 2 recovering a restarted switch, 3 running.", nil, nil)
	descPrimary   = prometheus.NewDesc("netlock_controller_primary", "1 while the controller is the switch's primary.", nil, nil)
	descTerm      = prometheus.NewDesc("netlock_controller_term", "The controller term used with the servers.", nil, nil)
	descSwLocks   = prometheus.NewDesc("netlock_controller_switch_locks", "Locks with an entry in the switch.", nil, nil)
	descMoves     = prometheus.NewDesc("netlock_controller_moves_total", "Moves of locks, by direction (in, out) and aborted moves in.", []string{"kind"}, nil)
	descBarriers  = prometheus.NewDesc("netlock_controller_barriers_total", "Barriers with a server completed.", nil, nil)
	descSweeps    = prometheus.NewDesc("netlock_controller_sweeps_total", "Lease sweeps of the switch.", nil, nil)
	descForced    = prometheus.NewDesc("netlock_controller_force_releases_total", "Expired switch grants force-released.", nil, nil)
	descPeriods   = prometheus.NewDesc("netlock_controller_alloc_periods_total", "Allocation periods run.", nil, nil)
	descValue     = prometheus.NewDesc("netlock_controller_alloc_value", "Objective of the last allocation (sum of r*s/c) and its upper bound.", []string{"which"}, nil)
	descSlots     = prometheus.NewDesc("netlock_controller_alloc_slots", "Switch queue slots allocated.", nil, nil)
	descFailures  = prometheus.NewDesc("netlock_controller_failures_total", "Failures handled, by kind.", []string{"kind"}, nil)
	descEffects   = prometheus.NewDesc("netlock_controller_effects_total", "Effects carried out, by kind.", []string{"kind"}, nil)
	descEffectErr = prometheus.NewDesc("netlock_controller_effect_errors_total", "Effects that failed, by kind.", []string{"kind"}, nil)
)

func (m *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPhase, descPrimary, descTerm, descSwLocks, descMoves, descBarriers, descSweeps,
		descForced, descPeriods, descValue, descSlots, descFailures, descEffects, descEffectErr} {
		ch <- d
	}
}

func (m *collector) Collect(ch chan<- prometheus.Metric) {
	s := m.c.Snapshot()
	st := s.Stats
	g := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	k := func(d *prometheus.Desc, v uint64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l...)
	}
	g(descPhase, float64(s.Phase))
	p := 0.0
	if s.Primary {
		p = 1
	}
	g(descPrimary, p)
	g(descTerm, float64(s.Term))
	g(descSwLocks, float64(st.SwitchLocks))
	k(descMoves, st.MovesIn, "in")
	k(descMoves, st.MovesOut, "out")
	k(descMoves, st.MovesAborted, "aborted")
	k(descBarriers, st.Barriers)
	k(descSweeps, st.Sweeps)
	k(descForced, st.ForceReleases)
	k(descPeriods, st.Periods)
	g(descValue, st.Value, "value")
	g(descValue, st.Best, "best")
	g(descSlots, float64(st.Slots))
	k(descFailures, st.BringUps, "switch-programmed")
	k(descFailures, st.Recovered, "locks-recovered")
	k(descFailures, st.ServerDeaths, "server-death")
	k(descFailures, st.Failovers, "failover")
	k(descFailures, st.ServerRestarts, "server-restart")
	k(descFailures, st.FailoversLearned, "failover-learned")
	k(descFailures, st.TermRaises, "term-raised")
	k(descFailures, st.Takeovers, "takeover")
	k(descEffects, st.Writes, "write")
	k(descEffects, st.SwitchAdmin, "switch-admin")
	k(descEffects, st.ServerAdmin, "server-admin")
	k(descEffectErr, st.WriteErrors, "write")
	k(descEffectErr, st.SwitchAdminErrors, "switch-admin")
	k(descEffectErr, st.ServerAdminErrors, "server-admin")
}
