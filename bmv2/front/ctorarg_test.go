package front

import "testing"

// TestCtorArg: a constructor parameter is bound by its named argument, else its positional one,
// else its default; nil when none binds it.
func TestCtorArg(t *testing.T) {
	one, two, dflt := &NameExpr{Name: "one"}, &NameExpr{Name: "two"}, &NameExpr{Name: "dflt"}
	params := []*Param{{Name: "a"}, {Name: "b", Deflt: dflt}}
	tests := []struct {
		name string
		args []*Arg
		i    int
		want Expr
	}{
		{"positional", []*Arg{{Value: one}, {Value: two}}, 1, two},
		{"named", []*Arg{{Name: "b", Value: two}, {Name: "a", Value: one}}, 0, one},
		{"default", []*Arg{{Value: one}}, 1, dflt},
		{"none", nil, 0, nil},
	}
	for _, tt := range tests {
		if got := CtorArg(params, tt.args, tt.i); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
