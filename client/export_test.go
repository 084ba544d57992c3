package client

import "time"

// StartFakeServer starts the in-test fake lock server (see fakeserver_test.go) for the examples,
// which live in package client_test. It returns the server's address and a function that stops it.
func StartFakeServer(lease time.Duration) (addr string, stop func(), err error) {
	s, err := startFake(lease)
	if err != nil {
		return "", nil, err
	}
	return s.addr(), s.close, nil
}
