package front

import "fmt"

// Architectures a checked program can be written for (Checked.Arch).
const (
	ArchV1Model = "v1model"
	ArchTNA     = "tna"
)

// Arch names the architecture of the program's main package: ArchTNA for tna.p4's Switch and
// MultiParserSwitch, ArchV1Model for V1Switch, "" for anything else (or no main).
func (c *Checked) Arch() string {
	if c.Main == nil {
		return ""
	}
	pt, ok := c.Main.T.(*PackageType)
	if !ok {
		return ""
	}
	switch {
	case isTNADecl(pt.Decl) && (pt.Decl.Name == "Switch" || pt.Decl.Name == "MultiParserSwitch"):
		return ArchTNA
	case pt.Decl.Name == "V1Switch":
		return ArchV1Model
	}
	return ""
}

// TofinoGeneration is the Tofino generation a TNA program is written for: 2 for t2na.p4 (or
// tna.p4 with __TARGET_TOFINO__ 2, which takes Tofino 2's widths), 1 for tna.p4, 0 for a program
// that is not TNA. It is read from the file that declared the port type.
func (c *Checked) TofinoGeneration() int {
	if c.Arch() != ArchTNA {
		return 0
	}
	for _, d := range c.Globals["PortId_t"] {
		if d.Position().File == "tofino2_specs.p4" {
			return 2
		}
	}
	return 1
}

// TNAPipe is one pipe of a TNA program: the Pipeline package instance passed to Switch and its
// six blocks.
type TNAPipe struct {
	// Name is the pipe's control-plane prefix, as bf-p4c forms it: the Pipeline instance's
	// name (Pipeline(...) pipe; Switch(pipe) main;), or the Switch parameter's (pipe0) for a
	// Pipeline constructed in the Switch's argument list.
	Name            string
	Param           string // the Switch parameter: pipe0 ... pipe3
	IngressParser   Block
	Ingress         Block
	IngressDeparser Block
	EgressParser    Block
	Egress          Block
	EgressDeparser  Block
}

// Blocks lists the pipe's blocks in pipeline order.
func (p *TNAPipe) Blocks() []Block {
	return []Block{p.IngressParser, p.Ingress, p.IngressDeparser, p.EgressParser, p.Egress, p.EgressDeparser}
}

// TNAPipes returns the pipes of a TNA program's Switch(...) main instance, in parameter order
// (pipe0 first). MultiParserSwitch programs are reported as unsupported.
func (c *Checked) TNAPipes() ([]*TNAPipe, error) {
	if c.Arch() != ArchTNA {
		return nil, fmt.Errorf("the program's main is not a TNA Switch")
	}
	pt := c.Main.T.(*PackageType)
	if pt.Decl.Name != "Switch" {
		return nil, fmt.Errorf("%s: not supported by the netlock target: %s (several parsers per pipe)", c.Main.P, pt.Decl.Name)
	}
	args, err := orderArgs(c.Main.Args, pt.Decl.Params, c.Main.P, pt.Decl.Name)
	if err != nil {
		return nil, err
	}
	var pipes []*TNAPipe
	for i, a := range args {
		if a == nil {
			continue // an @optional pipe left out
		}
		p := &TNAPipe{Param: pt.Decl.Params[i].Name}
		var pkgArgs []*Arg
		var pd *PackageDecl
		switch v := a.Value.(type) {
		case *NameExpr:
			inst, ok := v.Decl.(*InstanceDecl)
			if !ok {
				return nil, fmt.Errorf("%s: %s is not a Pipeline instance", v.P, v.Name)
			}
			ipt, ok := inst.T.(*PackageType)
			if !ok {
				return nil, fmt.Errorf("%s: %s is not a Pipeline instance", v.P, v.Name)
			}
			p.Name, pkgArgs, pd = cpName("", inst.Annos, inst.Name), inst.Args, ipt.Decl
		case *CallExpr:
			d, ok := v.Callee.(*PackageDecl)
			if !ok {
				return nil, fmt.Errorf("%s: argument %s of Switch is not a Pipeline", v.P, p.Param)
			}
			p.Name, pkgArgs, pd = p.Param, v.Args, d
		default:
			return nil, fmt.Errorf("%s: argument %s of Switch is not a Pipeline", a.Value.Position(), p.Param)
		}
		if pd.Name != "Pipeline" {
			return nil, fmt.Errorf("%s: argument %s of Switch is a %s, not a Pipeline", a.Value.Position(), p.Param, pd.Name)
		}
		bargs, err := orderArgs(pkgArgs, pd.Params, a.Value.Position(), pd.Name)
		if err != nil {
			return nil, err
		}
		blocks := make([]Block, len(bargs))
		for k, ba := range bargs {
			if ba == nil {
				return nil, fmt.Errorf("%s: Pipeline argument %s is missing", a.Value.Position(), pd.Params[k].Name)
			}
			b, err := blockOf(ba)
			if err != nil {
				return nil, err
			}
			blocks[k] = b
		}
		if len(blocks) != 6 || blocks[0].Parser == nil || blocks[3].Parser == nil {
			return nil, fmt.Errorf("%s: a Pipeline needs two parsers and four controls", a.Value.Position())
		}
		p.IngressParser, p.Ingress, p.IngressDeparser = blocks[0], blocks[1], blocks[2]
		p.EgressParser, p.Egress, p.EgressDeparser = blocks[3], blocks[4], blocks[5]
		pipes = append(pipes, p)
	}
	return pipes, nil
}

// orderArgs orders a package instantiation's arguments (positional or named) by the
// package's parameters; left-out @optional parameters are nil.
func orderArgs(given []*Arg, params []*Param, pos Pos, pkg string) ([]*Arg, error) {
	args := make([]*Arg, len(params))
	for i, a := range given {
		if a.Name == "" {
			if i < len(args) {
				args[i] = a
			}
			continue
		}
		found := false
		for j, p := range params {
			if p.Name == a.Name {
				args[j], found = a, true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: %s has no parameter %s", pos, pkg, a.Name)
		}
	}
	return args, nil
}

// blockOf resolves a package argument to the parser or control it instantiates.
func blockOf(a *Arg) (Block, error) {
	var decl Decl
	var ctorArgs []*Arg
	switch v := a.Value.(type) {
	case *CallExpr:
		decl, ctorArgs = v.Callee, v.Args
	case *NameExpr:
		if inst, ok := v.Decl.(*InstanceDecl); ok {
			ctorArgs = inst.Args
			switch t := inst.T.(type) {
			case *ParserType:
				decl = t.Decl
			case *ControlType:
				decl = t.Decl
			}
		}
	}
	switch d := decl.(type) {
	case *ParserDecl:
		return Block{Parser: d, Args: ctorArgs}, nil
	case *ControlDecl:
		return Block{Control: d, Args: ctorArgs}, nil
	}
	return Block{}, fmt.Errorf("%s: not a parser or control instantiation", a.Value.Position())
}

// IsTNADecl reports whether a declaration comes from netlock's tna.p4 (not a user
// declaration that shares a name with a TNA extern).
func IsTNADecl(d Decl) bool { return isTNADecl(d) }
