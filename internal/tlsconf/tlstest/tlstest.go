// Package tlstest makes throw-away certificates for the tests of netlock's TLS connections: a
// CA, a server certificate for 127.0.0.1 and a client certificate signed by it, and a second
// CA's client certificate that the first CA does not vouch for.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI names the PEM files NewPKI wrote.
type PKI struct {
	CA           string // the CA certificate
	ServerCert   string // for 127.0.0.1, signed by CA
	ServerKey    string
	ClientCert   string // signed by CA
	ClientKey    string
	StrangerCert string // a client certificate signed by another CA
	StrangerKey  string
	StrangerCA   string // that other CA
	dir          string
	serial       int64
}

// NewPKI writes a PKI into t.TempDir().
func NewPKI(t testing.TB) PKI {
	t.Helper()
	dir := t.TempDir()
	p := PKI{dir: dir}
	f := func(name string) string { return filepath.Join(dir, name) }
	p.CA, p.ServerCert, p.ServerKey = f("ca.pem"), f("server.pem"), f("server.key")
	p.ClientCert, p.ClientKey = f("client.pem"), f("client.key")
	p.StrangerCA, p.StrangerCert, p.StrangerKey = f("other-ca.pem"), f("stranger.pem"), f("stranger.key")
	ca, caKey := p.newCA(t, p.CA, "netlock test CA")
	p.leaf(t, ca, caKey, "switch", x509.ExtKeyUsageServerAuth, p.ServerCert, p.ServerKey)
	p.leaf(t, ca, caKey, "controller", x509.ExtKeyUsageClientAuth, p.ClientCert, p.ClientKey)
	other, otherKey := p.newCA(t, p.StrangerCA, "another CA")
	p.leaf(t, other, otherKey, "stranger", x509.ExtKeyUsageClientAuth, p.StrangerCert, p.StrangerKey)
	return p
}

func (p *PKI) next() *big.Int {
	p.serial++
	return big.NewInt(p.serial)
}

func (p *PKI) newCA(t testing.TB, file, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: p.next(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, file, "CERTIFICATE", der)
	return cert, key
}

func (p *PKI) leaf(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, usage x509.ExtKeyUsage,
	certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: p.next(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
}

func writePEM(t testing.TB, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
