package p4rtclient

import (
	"errors"
	"fmt"
	"strings"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors, one per gRPC code a caller typically branches on. errors.Is(err, ErrX)
// holds for a *WriteError (or a *BatchError holding one) with that code, and status.Code(err)
// gives the code of a single failed update.
var (
	ErrNotFound           error = codeError(codes.NotFound)
	ErrAlreadyExists      error = codeError(codes.AlreadyExists)
	ErrPermissionDenied   error = codeError(codes.PermissionDenied)
	ErrInvalidArgument    error = codeError(codes.InvalidArgument)
	ErrResourceExhausted  error = codeError(codes.ResourceExhausted)
	ErrFailedPrecondition error = codeError(codes.FailedPrecondition)
	ErrUnavailable        error = codeError(codes.Unavailable)
)

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("controlplane: client closed")

// ErrNoPipeline is returned when an entity needs the P4Info and the Client has none (no
// SetPipeline or LoadPipeline yet).
var ErrNoPipeline = errors.New("controlplane: no pipeline: call SetPipeline or LoadPipeline first")

type codeError codes.Code

func (c codeError) Error() string { return "controlplane: " + codes.Code(c).String() }

// WriteError is one update that the switch refused, or that failed with its Write RPC.
type WriteError struct {
	// Op is the update's type (INSERT, MODIFY, DELETE).
	Op p4v1.Update_Type
	// Entity names what was written, e.g. `table MyIngress.ipv4_lpm` or `clone session 5`.
	Entity string
	// Code and Message are the update's own status (the p4.v1.Error the switch returned for
	// it), or the RPC's when the switch gave no per-update detail.
	Code    codes.Code
	Message string
	// Err is the Write RPC's error as the gRPC client returned it.
	Err error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("controlplane: %s %s: %s: %s", strings.ToLower(e.Op.String()), e.Entity, e.Code, e.Message)
}

// Unwrap returns the RPC's error.
func (e *WriteError) Unwrap() error { return e.Err }

// GRPCStatus makes status.Code and status.FromError report the update's own status.
func (e *WriteError) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// Is matches the sentinel of the update's code.
func (e *WriteError) Is(target error) bool {
	c, ok := target.(codeError)
	return ok && codes.Code(c) == e.Code
}

// BatchError is a Write of several updates of which some failed. Errors is parallel to the
// updates: nil for those that were applied.
type BatchError struct {
	Errors []*WriteError
}

func (e *BatchError) Error() string {
	var b strings.Builder
	n := 0
	for i, w := range e.Errors {
		if w == nil {
			continue
		}
		if n == 0 {
			fmt.Fprintf(&b, "update %d: %v", i, w)
		}
		n++
	}
	if n > 1 {
		fmt.Fprintf(&b, " (and %d more failed updates of %d)", n-1, len(e.Errors))
	}
	return b.String()
}

// Unwrap returns the failed updates' errors, so errors.Is and errors.As see each of them.
func (e *BatchError) Unwrap() []error {
	var out []error
	for _, w := range e.Errors {
		if w != nil {
			out = append(out, w)
		}
	}
	return out
}

// writeErrors turns a Write RPC's error into one WriteError per update (nil for the applied
// ones): from the p4.v1.Error details when the switch gave one per update, else the RPC's
// status for every update.
func writeErrors(err error, ups []Update) []*WriteError {
	out := make([]*WriteError, len(ups))
	st, _ := status.FromError(err)
	var details []*p4v1.Error
	for _, d := range st.Details() {
		if pe, ok := d.(*p4v1.Error); ok {
			details = append(details, pe)
		}
	}
	for i, u := range ups {
		w := &WriteError{Op: u.Op, Entity: u.What, Code: st.Code(), Message: st.Message(), Err: err}
		if len(details) == len(ups) {
			d := details[i]
			if codes.Code(d.GetCanonicalCode()) == codes.OK {
				continue
			}
			w.Code, w.Message = codes.Code(d.GetCanonicalCode()), d.GetMessage()
		}
		out[i] = w
	}
	return out
}

// codeOf and messageOf read an RPC error's status.
func codeOf(err error) codes.Code { return status.Code(err) }

func messageOf(err error) string {
	st, _ := status.FromError(err)
	return st.Message()
}
