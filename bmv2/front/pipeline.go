package front

import "fmt"

// Block is one programmable block of the pipeline: a parser or control declaration with the
// constructor arguments it was instantiated with.
type Block struct {
	Parser  *ParserDecl  // set for parsers
	Control *ControlDecl // set for controls
	Args    []*Arg       // constructor arguments
}

// Name is the declaration's name (p4c's prefix for the block's control-plane objects).
func (b Block) Name() string {
	if b.Parser != nil {
		return b.Parser.Name
	}
	if b.Control != nil {
		return b.Control.Name
	}
	return ""
}

// V1Switch lists the six blocks of a v1model program, in pipeline order.
type V1Switch struct {
	Parser          Block
	VerifyChecksum  Block
	Ingress         Block
	Egress          Block
	ComputeChecksum Block
	Deparser        Block
}

// V1Switch returns the blocks passed to the program's V1Switch(...) main instance.
func (c *Checked) V1Switch() (*V1Switch, error) {
	if c.Main == nil {
		return nil, fmt.Errorf("the program has no main package instance")
	}
	pt, ok := c.Main.T.(*PackageType)
	if !ok || pt.Decl.Name != "V1Switch" {
		return nil, fmt.Errorf("%s: main is not a V1Switch", c.Main.P)
	}
	// Arguments may be named; order them by the package's parameters.
	args := make([]*Arg, len(pt.Decl.Params))
	for i, a := range c.Main.Args {
		if a.Name == "" {
			args[i] = a
			continue
		}
		for j, p := range pt.Decl.Params {
			if p.Name == a.Name {
				args[j] = a
			}
		}
	}
	blocks := make([]Block, len(args))
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("%s: V1Switch argument %d is missing", c.Main.P, i+1)
		}
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
			blocks[i] = Block{Parser: d, Args: ctorArgs}
		case *ControlDecl:
			blocks[i] = Block{Control: d, Args: ctorArgs}
		default:
			return nil, fmt.Errorf("%s: V1Switch argument %d is not a parser or control", a.Value.Position(), i+1)
		}
	}
	if len(blocks) != 6 || blocks[0].Parser == nil {
		return nil, fmt.Errorf("%s: V1Switch needs a parser and five controls", c.Main.P)
	}
	for _, b := range blocks[1:] {
		if b.Control == nil {
			return nil, fmt.Errorf("%s: V1Switch needs a parser and five controls", c.Main.P)
		}
	}
	return &V1Switch{blocks[0], blocks[1], blocks[2], blocks[3], blocks[4], blocks[5]}, nil
}

// CtorArg is the expression that binds constructor parameter params[i] of an instantiation with
// args: its named argument, else its positional one (args[i] without a name), else the
// parameter's default; nil when none does. The engine binds a block's constructor parameters and
// the Tofino model specializes a control by it (one rule for both).
func CtorArg(params []*Param, args []*Arg, i int) Expr {
	p := params[i]
	for _, a := range args {
		if a.Name == p.Name {
			return a.Value
		}
	}
	if i < len(args) && args[i].Name == "" {
		return args[i].Value
	}
	return p.Deflt
}
