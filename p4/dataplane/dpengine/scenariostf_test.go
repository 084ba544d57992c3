package dpengine

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/netlock-go/netlock/bmv2/stf"
	"github.com/netlock-go/netlock/p4/dataplane"
)

func TestScenarioSTF(t *testing.T) {
	cmd := func(name string, args ...string) stf.Command { return stf.Command{Line: 7, Name: name, Args: args} }
	in := []stf.Command{
		cmd("mirroring_add", "2", "1"),
		cmd("mirroring_add", "3", "2", "100"),
		cmd("register_read", dataplane.RegisterQueue, "5", "0x0004000300020001"),
		cmd("register_read", dataplane.RegisterState, "5", "7"),
		cmd("register_read", dataplane.RegisterQueue, "6", "junk"),
		cmd("packet", "1", "00"),
	}
	keep := append([]stf.Command(nil), in...)
	n := strconv.Itoa(dataplane.TNAAnswerCopyBytes)
	tests := []struct {
		arch string
		want []stf.Command
	}{
		{dataplane.V1Model.Name, in},
		{dataplane.TNA.Name, []stf.Command{
			cmd("mirroring_add", "2", "1", n),
			cmd("mirroring_add", "3", "2", "100"), // a length given stays
			cmd("register_read", dataplane.RegisterQueue, "5", "1"),
			cmd("register_read", dataplane.RegisterQueueHigh, "5", "2"),
			cmd("register_read", dataplane.RegisterBuffered, "5", "3"),
			cmd("register_read", dataplane.RegisterDone, "5", "4"),
			cmd("register_read", dataplane.RegisterState, "5", "7"),
			cmd("register_read", dataplane.RegisterQueue, "6", "junk"), // left to the runner to report
			cmd("packet", "1", "00"),
		}},
	}
	for _, tt := range tests {
		if got := ScenarioSTF(tt.arch, in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %v\nwant %v", tt.arch, got, tt.want)
		}
		if !reflect.DeepEqual(in, keep) {
			t.Fatalf("%s: the input was modified: %v", tt.arch, in)
		}
	}
}
