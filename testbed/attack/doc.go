// Package attack replays, against the built netlock binaries, what an attacker, a crash and a
// careless operator did to netlock (issue 18; docs/reliability.md, "Attacks"): each test starts
// `netlock server` or `netlock switch` as a process, attacks it from outside the code (kill -9
// and restart, a second instance on the same address, an unauthenticated client on every port,
// forged and reflected datagrams, hostile programs, floods) and checks that exclusion and the
// service hold. Each attack has a negative control that shows the check can fail: the same
// attack with the defence switched off (an unsafe flag) breaks it.
//
// `make attack` runs them; `make test` runs them too.
package attack
