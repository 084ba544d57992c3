package dpengine

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/p4rt"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// Check checks the embedded p4/netlock.p4 with s's macros.
func Check(s dataplane.Sizing) (*front.Checked, error) { return CheckProgram(dataplane.V1Model, s) }

// CheckProgram checks prog with s's macros.
func CheckProgram(prog dataplane.Program, s dataplane.Sizing) (*front.Checked, error) {
	return checkSource(prog, s, prog.Source)
}

// checkSource checks src (a version of prog: the mutation tests change it) with s's macros.
func checkSource(prog dataplane.Program, s dataplane.Sizing, src []byte) (*front.Checked, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	read := func(name string) ([]byte, error) {
		if path.Clean(name) == prog.File {
			return src, nil
		}
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	c, err := front.LoadOptions(prog.File, front.Options{Defines: prog.MacrosWith(s), ReadFile: read})
	if err != nil {
		return nil, fmt.Errorf("dataplane: %w", err)
	}
	return c, nil
}

// Bundle returns the device config that installs p4/netlock.p4 with s's sizes over
// P4Runtime on netlock switch: a main file with the #defines that includes netlock.p4.
func Bundle(s dataplane.Sizing) *p4rt.Bundle { return BundleProgram(dataplane.V1Model, s) }

// BundleProgram returns the device config that installs prog with s's sizes over P4Runtime
// on netlock switch: a main file with the #defines (the sizes', then the build's: Program.Defines)
// that includes the program.
func BundleProgram(prog dataplane.Program, s dataplane.Sizing) *p4rt.Bundle {
	s = s.WithDefaults()
	var build strings.Builder
	for _, k := range slices.Sorted(maps.Keys(prog.Defines)) {
		fmt.Fprintf(&build, "#define %s %s\n", k, prog.Defines[k])
	}
	main := fmt.Sprintf("/* p4/%s with its sizes (dataplane.Sizing). */\n"+
		"#define NETLOCK_LOCKS %d\n#define NETLOCK_PART_BITS %d\n#define NETLOCK_TENANT_METERS %d\n"+
		"#define NETLOCK_ENDED %d\n#define CPU_PORT %d\n%s#include \"%s\"\n", prog.File, s.Locks, s.PartBits, s.TenantMeters,
		s.Ended, s.CPUPort, build.String(), path.Base(prog.File))
	return &p4rt.Bundle{Files: []p4rt.BundleFile{
		{Name: "netlock_sized.p4", Data: []byte(main)},
		{Name: path.Base(prog.File), Data: prog.Source},
	}}
}
