// Package tlsconf builds the TLS configurations of netlock's P4Runtime connections from PEM
// files, the way Stratum and simple_switch_grpc take them: the switch has a server certificate
// and key and a CA that signs its controllers' client certificates; a controller has the CA that
// signs the switch's certificate and, for mutual authentication, a client certificate and key.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
)

// Server returns the TLS configuration of a P4Runtime server: certFile and keyFile are its
// certificate and key; with clientCA set, clients must present a certificate signed by it
// (requireClient) or may (otherwise).
func Server(certFile, keyFile, clientCA string, requireClient bool) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tls: a server needs a certificate and a key")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: server certificate: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if requireClient && clientCA == "" {
		return nil, errors.New("tls: client authentication needs the CA that signs the clients' certificates")
	}
	if clientCA != "" {
		pool, err := loadPool(clientCA)
		if err != nil {
			return nil, err
		}
		c.ClientCAs = pool
		c.ClientAuth = tls.VerifyClientCertIfGiven
		if requireClient {
			c.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return c, nil
}

// Client returns the TLS configuration of a P4Runtime client: caFile verifies the server (the
// system's roots if empty), certFile and keyFile are the client's own certificate for mutual
// authentication (both or neither), serverName overrides the name checked against the server's
// certificate (default: the host of the address dialled).
func Client(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pool, err := loadPool(caFile)
		if err != nil {
			return nil, err
		}
		c.RootCAs = pool
	}
	switch {
	case certFile != "" && keyFile != "":
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("tls: client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	case certFile != "" || keyFile != "":
		return nil, errors.New("tls: give both the client certificate and its key, or neither")
	}
	return c, nil
}

func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tls: CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls: CA %s: no PEM certificate in it", file)
	}
	return pool, nil
}

// Loopback reports whether addr (host:port as given to a listener) only listens on a loopback
// address. An empty or unspecified host ("", "0.0.0.0", "::") listens everywhere: false.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
