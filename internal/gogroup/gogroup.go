// Package gogroup tracks the goroutines a component starts, so that closing the component can
// refuse new ones and wait for the running ones.
package gogroup

import "sync"

// Group is a set of goroutines that stops accepting new members once closed. The zero value is
// ready to use.
type Group struct {
	mu     sync.Mutex
	closed bool // guarded by mu
	wg     sync.WaitGroup
}

// Go runs f on a new goroutine of the group and reports true, or reports false without running f
// if the group is closed.
func (g *Group) Go(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// Close makes Go refuse new goroutines. It reports whether this call closed the group (false if it
// was closed already).
func (g *Group) Close() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	was := g.closed
	g.closed = true
	return !was
}

// Wait waits until every goroutine started by Go has returned.
func (g *Group) Wait() { g.wg.Wait() }
