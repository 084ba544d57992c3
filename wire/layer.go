package wire

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LayerTypeNumber is the gopacket layer-type number of [LayerTypeNetLock]. gopacket reserves
// 0-999 for itself and recommends 1000-1999 for application layers.
const LayerTypeNumber = 1888

// LayerTypeNetLock is the gopacket layer type of a netlock header. Importing this package
// registers it and makes gopacket's UDP decoder hand datagrams to or from port [Port] to it, so
// that a pcap of netlock traffic decodes with gopacket.NewPacket(data, layers.LayerTypeEthernet, …).
var LayerTypeNetLock = gopacket.RegisterLayerType(LayerTypeNumber, gopacket.LayerTypeMetadata{
	Name:    "NetLock",
	Decoder: gopacket.DecodeFunc(decodeNetLock),
})

func init() {
	layers.RegisterUDPPortLayerType(layers.UDPPort(Port), LayerTypeNetLock)
}

// NetLock is the gopacket layer of a netlock header. It is the application layer of the packet;
// bytes after the 48-byte header (reserved, see docs/protocol.md) are its payload and decode as
// gopacket.LayerTypePayload.
//
// Unlike [Header], NetLock copies the fields out of the packet (into [Fields]); it is meant for
// tools and tests, not for the lock server's fast path.
type NetLock struct {
	layers.BaseLayer
	// Version is the header's version byte. Decoding accepts only [Version]; SerializeTo writes
	// Version when it is nonzero and [Version] otherwise (a nonzero value other than [Version]
	// lets tests build malformed packets).
	Version uint8
	Fields
}

var (
	_ gopacket.Layer             = (*NetLock)(nil)
	_ gopacket.ApplicationLayer  = (*NetLock)(nil)
	_ gopacket.DecodingLayer     = (*NetLock)(nil)
	_ gopacket.SerializableLayer = (*NetLock)(nil)
	_ gopacket.LayerClass        = LayerTypeNetLock
	_ fmt.Stringer               = (*NetLock)(nil)
)

// LayerType returns [LayerTypeNetLock].
func (l *NetLock) LayerType() gopacket.LayerType { return LayerTypeNetLock }

// CanDecode returns [LayerTypeNetLock].
func (l *NetLock) CanDecode() gopacket.LayerClass { return LayerTypeNetLock }

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

// DecodeFromBytes decodes a netlock header from data. It rejects exactly what [Parse] rejects
// (short, wrong version, unknown op or mode); a short packet is also reported as truncated to df.
func (l *NetLock) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h := Header(data)
	if err := h.Validate(); err != nil {
		if err == ErrShort {
			df.SetTruncated()
		}
		return err
	}
	l.Version = h.Version()
	h.Decode(&l.Fields)
	l.BaseLayer = layers.BaseLayer{Contents: data[:Len], Payload: data[Len:]}
	return nil
}

// SerializeTo prepends the header to b. The bytes already in b (if any) are the payload.
func (l *NetLock) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	bytes, err := b.PrependBytes(Len)
	if err != nil {
		return err
	}
	h := Header(bytes)
	h.Encode(&l.Fields)
	if l.Version != 0 {
		h.SetVersion(l.Version)
	}
	return nil
}

// String renders the header as [Fields.String] does.
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
