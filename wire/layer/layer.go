// Package layer is the gopacket layer of the netlock header, for tools and tests that decode
// captures (package wire itself stays free of gopacket). Importing it registers the layer type and
// makes gopacket's UDP decoder hand datagrams to or from wire.Port to it.
package layer

import (
	"fmt"

	"github.com/netlock-go/netlock/wire"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TypeNumber is the gopacket layer-type number of [TypeNetLock]. gopacket reserves
// 0-999 for itself and recommends 1000-1999 for application layers.
const TypeNumber = 1888

// TypeNetLock is the gopacket layer type of a netlock header. Importing this package
// registers it and makes gopacket's UDP decoder hand datagrams to or from port [wire.Port] to it, so
// that a pcap of netlock traffic decodes with gopacket.NewPacket(data, layers.LayerTypeEthernet, …).
var TypeNetLock = gopacket.RegisterLayerType(TypeNumber, gopacket.LayerTypeMetadata{
	Name:    "NetLock",
	Decoder: gopacket.DecodeFunc(decodeNetLock),
})

func init() {
	layers.RegisterUDPPortLayerType(layers.UDPPort(wire.Port), TypeNetLock)
}

// NetLock is the gopacket layer of a netlock header. It is the application layer of the packet;
// bytes after the 48-byte header (reserved, see docs/protocol.md) are its payload and decode as
// gopacket.LayerTypePayload.
//
// Unlike [wire.Header], NetLock copies the fields out of the packet (into [wire.Fields]); it is meant for
// tools and tests, not for the lock server's fast path.
type NetLock struct {
	layers.BaseLayer
	// Version is the header's version byte. Decoding accepts only [wire.Version]; SerializeTo
	// writes Version when it is nonzero and [wire.Version] otherwise (a nonzero value other than
	// [wire.Version] lets tests build malformed packets).
	Version uint8
	wire.Fields
}

var (
	_ gopacket.Layer             = (*NetLock)(nil)
	_ gopacket.ApplicationLayer  = (*NetLock)(nil)
	_ gopacket.DecodingLayer     = (*NetLock)(nil)
	_ gopacket.SerializableLayer = (*NetLock)(nil)
	_ gopacket.LayerClass        = TypeNetLock
	_ fmt.Stringer               = (*NetLock)(nil)
)

// LayerType returns [TypeNetLock].
func (l *NetLock) LayerType() gopacket.LayerType { return TypeNetLock }

// CanDecode returns [TypeNetLock].
func (l *NetLock) CanDecode() gopacket.LayerClass { return TypeNetLock }

// NextLayerType returns gopacket.LayerTypePayload when bytes follow the header and
// gopacket.LayerTypeZero otherwise.
func (l *NetLock) NextLayerType() gopacket.LayerType {
	if len(l.BaseLayer.Payload) > 0 {
		return gopacket.LayerTypePayload
	}
	return gopacket.LayerTypeZero
}

// Payload returns the bytes after the header (the ApplicationLayer interface).
func (l *NetLock) Payload() []byte { return l.BaseLayer.Payload }

// DecodeFromBytes decodes a netlock header from data. It rejects exactly what [wire.Parse] rejects
// (short, wrong version, unknown op or mode); a short packet is also reported as truncated to df.
func (l *NetLock) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h := wire.Header(data)
	if err := h.Validate(); err != nil {
		if err == wire.ErrShort {
			df.SetTruncated()
		}
		return err
	}
	l.Version = h.Version()
	h.Decode(&l.Fields)
	l.BaseLayer = layers.BaseLayer{Contents: data[:wire.Len], Payload: data[wire.Len:]}
	return nil
}

// SerializeTo prepends the header to b. The bytes already in b (if any) are the payload.
func (l *NetLock) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	bytes, err := b.PrependBytes(wire.Len)
	if err != nil {
		return err
	}
	h := wire.Header(bytes)
	h.Encode(&l.Fields)
	if l.Version != 0 {
		h.SetVersion(l.Version)
	}
	return nil
}

// String renders the header as [wire.Fields.String] does.
func (l *NetLock) String() string { return l.Fields.String() }

func decodeNetLock(data []byte, p gopacket.PacketBuilder) error {
	l := &NetLock{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	p.SetApplicationLayer(l)
	if len(l.BaseLayer.Payload) == 0 {
		return nil
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}
