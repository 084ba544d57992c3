package simrack

import (
	"time"

	"github.com/netlock-go/netlock/controlplane/ctlcore"
)

// RestartSwitch stops the switch now (every frame dropped, the controllers' streams break) and
// starts it again after down with fresh registers, empty tables and no pipeline, as a restarted
// `netlock switch` process; the primary controller's stream then comes back.
func (s *Sim) RestartSwitch(down time.Duration) {
	s.sw = nil
	s.hasP4 = false
	for _, c := range s.ctls {
		c.step(ctlcore.Primary{IsPrimary: false})
	}
	s.at(down, func() {
		if err := s.loadSwitch(); err != nil {
			panic(err)
		}
		s.ctls[s.primary].step(ctlcore.Primary{IsPrimary: true})
	})
}

// KillServer stops server n now: it answers nothing any more. With Standbys, the controller's
// failover brings its standby in.
func (s *Sim) KillServer(n uint16) {
	if sv := s.srv[n]; sv != nil {
		sv.dead = true
		if sb := s.spare[n]; sb != nil {
			s.srv[n] = sb
			delete(s.spare, n)
		}
	}
}

// KillController stops controller 0 now; the backup (Config.Backup) is told it is primary after
// delay, as a P4Runtime switch promotes the next controller when the primary's stream ends.
func (s *Sim) KillController(delay time.Duration) {
	s.ctls[0].alive = false
	if len(s.ctls) > 1 {
		s.at(delay, func() { s.ctls[1].step(ctlcore.Primary{IsPrimary: true}) })
	}
}
