package lockserver

import "github.com/netlock-go/netlock/lockserver/srvcore"

// Peers says who may send which control message to a server (srvcore.Peers: the rule lives
// in the server core).
type Peers = srvcore.Peers
