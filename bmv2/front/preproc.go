package front

import (
	"embed"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

//go:embed arch/*.p4
var archFS embed.FS

// builtinIncludes maps the system includes netlock provides to their embedded files: core.p4,
// v1model.p4, tna.p4 and t2na.p4 with the files they include.
var builtinIncludes = map[string]string{
	"core.p4":          "arch/core.p4",
	"v1model.p4":       "arch/v1model.p4",
	"tna.p4":           "arch/tna.p4",
	"tofino1_specs.p4": "arch/tofino1_specs.p4",
	"tofino1_base.p4":  "arch/tofino1_base.p4",
	"tofino1_arch.p4":  "arch/tofino1_arch.p4",
	"t2na.p4":          "arch/t2na.p4",
	"tofino2_specs.p4": "arch/tofino2_specs.p4",
	"tofino2_base.p4":  "arch/tofino2_base.p4",
	"tofino2_arch.p4":  "arch/tofino2_arch.p4",
}

// ReadFileFunc reads a source file; Preprocess uses it for the main file and quoted includes.
type ReadFileFunc func(path string) ([]byte, error)

type macro struct {
	name     string
	body     []Token
	pos      Pos
	funcLike bool
	params   []string
}

type condFrame struct {
	active    bool // lines in the current branch are emitted
	parentOn  bool // the enclosing region is active
	taken     bool // some branch of this #if chain was taken
	seenElse  bool
	openedPos Pos
	// guard is NAME of an #ifndef NAME frame: a #define NAME directly inside it is a
	// default that -D overrides (a parameter of the program, IntLit.Param).
	guard string
}

type preprocessor struct {
	read     ReadFileFunc
	macros   map[string]*macro
	out      []Token
	errs     ErrorList
	depth    int
	included map[string]bool // builtin includes already expanded
	tooBig   bool
	dirs     []string // include directories for quoted includes
	maxNest  int      // Options.MaxNesting: macro expansions within expansions, #if nesting
	tooDeep  bool     // a nesting error was reported (once)
}

// Preprocess runs the C-like preprocessor over the file at path and returns its tokens, with
// each token's position in its original file. readFile defaults to os.ReadFile.
func Preprocess(path string, readFile ReadFileFunc) ([]Token, ErrorList) {
	return PreprocessWith(path, Options{ReadFile: readFile})
}

// Options configure preprocessing.
type Options struct {
	// ReadFile reads the main file and quoted includes; nil means os.ReadFile.
	ReadFile ReadFileFunc
	// Defines are predefined object-like macros, like p4c's -DNAME=VALUE (an empty value
	// defines NAME as 1).
	Defines map[string]string
	// IncludeDirs are searched, in order, for a quoted #include that is not found next to the
	// including file (p4c's -I).
	IncludeDirs []string
	// MaxNesting bounds how deeply a program may nest: expressions (the height of an
	// expression's tree, so a chain a+b+c+... counts one level per operator), statements,
	// types, #if expressions and macro expansions. A program nested deeper is rejected with a
	// syntax error that says "nested too deeply". 0 means DefaultMaxNesting. The bound keeps
	// hostile programs from exhausting the stack of the front end and of everything that walks
	// its trees (the checker, constant folding, the engine's compiler).
	MaxNesting int
}

// DefaultMaxNesting is the nesting bound of Options.MaxNesting's zero value. The deepest
// program of the repository and of p4c's P4_16 test corpus nests less than a tenth of it
// (docs/p4.md, "Bounds").
const DefaultMaxNesting = 256

func (o Options) maxNesting() int {
	if o.MaxNesting > 0 {
		return o.MaxNesting
	}
	return DefaultMaxNesting
}

// errNesting starts the message of every nesting-bound error.
const errNesting = "syntax error: nested too deeply"

// PreprocessWith is Preprocess with options.
func PreprocessWith(path string, opts Options) ([]Token, ErrorList) {
	readFile := opts.ReadFile
	if readFile == nil {
		readFile = os.ReadFile
	}
	pp := &preprocessor{read: readFile, macros: map[string]*macro{}, included: map[string]bool{}, dirs: opts.IncludeDirs, maxNest: opts.maxNesting()}
	names := make([]string, 0, len(opts.Defines))
	for n := range opts.Defines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := opts.Defines[n]
		if v == "" {
			v = "1"
		}
		pos := Pos{File: "<command line>", Line: 1, Col: 1}
		if n == "" || !isIdentStart(n[0]) || strings.IndexFunc(n, func(r rune) bool { return r > 127 || !isIdentChar(byte(r)) }) >= 0 {
			pp.errs = append(pp.errs, errorf(pos, "-D%s: invalid macro name", n))
			continue
		}
		pp.macros[n] = &macro{name: n, body: markParam(lexLine(v, pos.File, 1, &pp.errs), n), pos: pos}
	}
	src, err := readFile(path)
	if err != nil {
		return nil, ErrorList{errorf(Pos{File: path}, "%v", err)}
	}
	pp.file(path, string(src))
	pp.out = append(pp.out, Token{Kind: TEOF, Pos: Pos{File: path, Line: strings.Count(string(src), "\n") + 1, Col: 1}})
	return pp.out, pp.errs
}

// PreprocessSource is Preprocess for an in-memory main file named name.
func PreprocessSource(name, src string, readFile ReadFileFunc) ([]Token, ErrorList) {
	return Preprocess(name, func(p string) ([]byte, error) {
		if p == name {
			return []byte(src), nil
		}
		if readFile != nil {
			return readFile(p)
		}
		return os.ReadFile(p)
	})
}

// stripComments blanks out comments, keeping newlines so line numbers survive.
func stripComments(src string, file string, errs *ErrorList) string {
	b := []byte(src)
	line := 1
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\n':
			line++
		case b[i] == '"':
			for i++; i < len(b) && b[i] != '"' && b[i] != '\n'; i++ {
				if b[i] == '\\' && i+1 < len(b) && b[i+1] != '\n' {
					i++
				}
			}
			if i < len(b) && b[i] == '\n' {
				line++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
			if i < len(b) {
				line++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			startLine := line
			closed := false
			for ; i < len(b); i++ {
				if b[i] == '*' && i+1 < len(b) && b[i+1] == '/' {
					b[i], b[i+1] = ' ', ' '
					i++
					closed = true
					break
				}
				if b[i] == '\n' {
					line++
				} else {
					b[i] = ' '
				}
			}
			if !closed {
				*errs = append(*errs, errorf(Pos{File: file, Line: startLine, Col: 1}, "unterminated comment"))
			}
		}
	}
	return string(b)
}

func (pp *preprocessor) file(path, src string) {
	pp.depth++
	defer func() { pp.depth-- }()
	if pp.depth > 50 {
		pp.errs = append(pp.errs, errorf(Pos{File: path, Line: 1, Col: 1}, "#include nested too deeply"))
		return
	}
	src = stripComments(src, path, &pp.errs)
	lines := strings.Split(src, "\n")
	var conds []condFrame
	active := func() bool { return len(conds) == 0 || conds[len(conds)-1].active }
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		text := lines[i]
		// Join continuation lines.
		for strings.HasSuffix(strings.TrimRight(text, " \t\r"), "\\") && i+1 < len(lines) {
			t := strings.TrimRight(text, " \t\r")
			text = t[:len(t)-1] + " " + lines[i+1]
			i++
		}
		trim := strings.TrimLeft(text, " \t")
		if !strings.HasPrefix(trim, "#") {
			if active() {
				pp.emit(lexLine(text, path, lineNo, &pp.errs))
			}
			continue
		}
		col := len(text) - len(trim) + 1
		pos := Pos{File: path, Line: lineNo, Col: col}
		rest := strings.TrimLeft(trim[1:], " \t")
		k := 0
		for k < len(rest) && isIdentChar(rest[k]) {
			k++
		}
		dir := rest[:k]
		arg := strings.TrimSpace(rest[len(dir):])
		switch dir {
		case "ifdef", "ifndef":
			on := active()
			name := firstWord(arg)
			m, def := pp.macros[name]
			cond := def == (dir == "ifdef")
			f := condFrame{active: on && cond, parentOn: on, taken: cond, openedPos: pos}
			if dir == "ifndef" && on {
				f.guard = name
				if def && !m.funcLike {
					// Defined before the program's default (by an including file, as a
					// P4Runtime bundle's main file does): a parameter set from outside.
					markParam(m.body, name)
				}
			}
			conds = append(conds, f)
		case "if":
			on := active()
			cond := false
			if on {
				cond = pp.evalIf(arg, pos, lineNo, path)
			}
			conds = append(conds, condFrame{active: on && cond, parentOn: on, taken: cond, openedPos: pos})
		case "elif":
			if len(conds) == 0 {
				pp.errs = append(pp.errs, errorf(pos, "#elif without #if"))
				continue
			}
			f := &conds[len(conds)-1]
			if f.seenElse {
				pp.errs = append(pp.errs, errorf(pos, "#elif after #else"))
			}
			f.guard = ""
			if f.taken || !f.parentOn {
				f.active = false
				continue
			}
			cond := pp.evalIf(arg, pos, lineNo, path)
			f.active, f.taken = cond, cond
		case "else":
			if len(conds) == 0 {
				pp.errs = append(pp.errs, errorf(pos, "#else without #if"))
				continue
			}
			f := &conds[len(conds)-1]
			if f.seenElse {
				pp.errs = append(pp.errs, errorf(pos, "#else after #else"))
			}
			f.seenElse = true
			f.guard = ""
			f.active = f.parentOn && !f.taken
			f.taken = true
		case "endif":
			if len(conds) == 0 {
				pp.errs = append(pp.errs, errorf(pos, "#endif without #if"))
				continue
			}
			conds = conds[:len(conds)-1]
		default:
			if !active() {
				continue
			}
			guard := ""
			if len(conds) > 0 {
				guard = conds[len(conds)-1].guard
			}
			pp.directive(dir, arg, pos, path, lineNo, text, guard)
		}
	}
	for _, f := range conds {
		pp.errs = append(pp.errs, errorf(f.openedPos, "unterminated conditional directive"))
	}
}

// markParam marks the integer literals of the body of macro name as the values of the program
// parameter name (IntLit.Param) and returns the body.
func markParam(body []Token, name string) []Token {
	for _, t := range body {
		if t.Lit != nil {
			t.Lit.Param = name
		}
	}
	return body
}

func firstWord(s string) string {
	if k := strings.IndexAny(s, " \t"); k >= 0 {
		return s[:k]
	}
	return s
}

// directive runs a directive of an active line; guard is NAME when the line is directly inside
// #ifndef NAME (see condFrame.guard).
func (pp *preprocessor) directive(dir, arg string, pos Pos, path string, lineNo int, text string, guard string) {
	switch dir {
	case "include":
		pp.include(arg, pos, path)
	case "define":
		k := 0
		for k < len(arg) && isIdentChar(arg[k]) {
			k++
		}
		name := arg[:k]
		if name == "" || !isIdentStart(name[0]) {
			pp.errs = append(pp.errs, errorf(pos, "#define needs a macro name"))
			return
		}
		m := &macro{name: name, pos: pos}
		rest := arg[k:]
		if strings.HasPrefix(rest, "(") {
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				pp.errs = append(pp.errs, errorf(pos, "#define %s: missing ) in the parameter list", name))
				return
			}
			m.funcLike = true
			for _, p := range strings.Split(rest[1:end], ",") {
				p = strings.TrimSpace(p)
				if p == "" && strings.TrimSpace(rest[1:end]) == "" {
					break
				}
				if p == "" || p == "..." || !isIdentStart(p[0]) {
					pp.errs = append(pp.errs, unsupported(pos, "macro parameter %q of %s", p, name))
					return
				}
				m.params = append(m.params, p)
			}
			rest = rest[end+1:]
		}
		bodyText := strings.TrimSpace(rest)
		if strings.Contains(strings.ReplaceAll(bodyText, "##", ""), "#") {
			pp.errs = append(pp.errs, unsupported(pos, "the # macro operator (in %s)", name))
			return
		}
		// Lex the body in place so that positions inside it are meaningful.
		off := strings.LastIndex(text, bodyText)
		if bodyText != "" && off >= 0 {
			pad := strings.Repeat(" ", off)
			// Token pasting (a ## b): a marker token that substitute replaces by joining its
			// neighbours.
			m.body = lexLine(pad+strings.ReplaceAll(bodyText, "##", " "+pasteMarker+" "), path, lineNo, &pp.errs)
		}
		if guard == name && !m.funcLike {
			markParam(m.body, name)
		}
		pp.macros[name] = m
	case "undef":
		delete(pp.macros, firstWord(arg))
	case "error":
		pp.errs = append(pp.errs, errorf(pos, "#error %s", arg))
	case "pragma", "line", "warning":
		// #pragma and friends carry no meaning for the netlock target.
	case "":
		// A null directive.
	default:
		pp.errs = append(pp.errs, unsupported(pos, "preprocessor directive #%s", dir))
	}
}

func (pp *preprocessor) include(arg string, pos Pos, path string) {
	if len(arg) < 2 {
		pp.errs = append(pp.errs, errorf(pos, "#include expects \"FILE\" or <FILE>"))
		return
	}
	switch arg[0] {
	case '<':
		end := strings.IndexByte(arg, '>')
		if end < 0 {
			pp.errs = append(pp.errs, errorf(pos, "#include expects \"FILE\" or <FILE>"))
			return
		}
		name := arg[1:end]
		emb, ok := builtinIncludes[name]
		if !ok {
			pp.errs = append(pp.errs, unsupported(pos, "system include <%s> (only <core.p4>, <v1model.p4>, <tna.p4> and <t2na.p4> are provided)", name))
			return
		}
		if pp.included[name] {
			return
		}
		pp.included[name] = true
		if name == "v1model.p4" && !pp.included["core.p4"] {
			pp.included["core.p4"] = true
			data, _ := archFS.ReadFile(builtinIncludes["core.p4"])
			pp.file("core.p4", string(data))
		}
		data, err := archFS.ReadFile(emb)
		if err != nil {
			pp.errs = append(pp.errs, errorf(pos, "%v", err))
			return
		}
		pp.file(name, string(data))
	case '"':
		end := strings.IndexByte(arg[1:], '"')
		if end < 0 {
			pp.errs = append(pp.errs, errorf(pos, "#include expects \"FILE\" or <FILE>"))
			return
		}
		name := arg[1 : end+1]
		if _, ok := builtinIncludes[name]; ok {
			pp.include("<"+name+">", pos, path)
			return
		}
		full := name
		if !filepath.IsAbs(name) {
			full = filepath.Join(filepath.Dir(path), name)
		}
		data, err := pp.read(full)
		if err != nil && !filepath.IsAbs(name) {
			for _, dir := range pp.dirs {
				if d, err2 := pp.read(filepath.Join(dir, name)); err2 == nil {
					full, data, err = filepath.Join(dir, name), d, nil
					break
				}
			}
		}
		if err != nil {
			pp.errs = append(pp.errs, errorf(pos, "cannot include %q: %v", name, err))
			return
		}
		pp.file(full, string(data))
	default:
		pp.errs = append(pp.errs, errorf(pos, "#include expects \"FILE\" or <FILE>"))
	}
}

// emit appends tokens, expanding object-like macros. Expanded tokens take the position of the
// macro use.
func (pp *preprocessor) emit(toks []Token) {
	pp.out = pp.expand(pp.out, toks, nil, Pos{})
}

// maxTokens bounds macro expansion (nested macros can grow exponentially).
const maxTokens = 1 << 20

func (pp *preprocessor) expand(out, toks []Token, active []string, at Pos) []Token {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if len(out) > maxTokens {
			if !pp.tooBig {
				pp.tooBig = true
				pp.errs = append(pp.errs, errorf(t.Pos, "program too large after macro expansion"))
			}
			return out
		}
		if at.Line != 0 {
			t.Pos = at
		}
		if t.Kind == TIdent {
			if m, ok := pp.macros[t.Text]; ok && !contains(active, t.Text) {
				if len(active) >= pp.maxNest {
					if !pp.tooDeep {
						pp.tooDeep = true
						pp.errs = append(pp.errs, errorf(t.Pos, "%s: macro %s expands more than %d macros deep", errNesting, t.Text, pp.maxNest))
					}
					return out
				}
				if !m.funcLike {
					out = pp.expand(out, substitute(m, nil), append(active, t.Text), t.Pos)
					continue
				}
				if i+1 < len(toks) && toks[i+1].Kind == TPunct && toks[i+1].Text == "(" {
					args, next, ok := macroArgs(toks, i+1)
					if !ok {
						pp.errs = append(pp.errs, unsupported(t.Pos, "a call of macro %s that does not end on the same line", m.name))
						return out
					}
					if len(args) != len(m.params) && !(len(m.params) == 0 && len(args) == 1 && len(args[0]) == 0) {
						pp.errs = append(pp.errs, errorf(t.Pos, "macro %s expects %d arguments, got %d", m.name, len(m.params), len(args)))
						return out
					}
					out = pp.expand(out, substitute(m, args), append(active, t.Text), t.Pos)
					i = next
					continue
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// macroArgs splits the tokens of a macro call's argument list, starting at the '(' at toks[open],
// and returns the arguments and the index of the closing ')'.
func macroArgs(toks []Token, open int) ([][]Token, int, bool) {
	depth := 0
	var args [][]Token
	var cur []Token
	for j := open; j < len(toks); j++ {
		t := toks[j]
		if t.Kind == TPunct {
			switch t.Text {
			case "(":
				depth++
				if depth == 1 {
					continue
				}
			case ")":
				depth--
				if depth == 0 {
					return append(args, cur), j, true
				}
			case ",":
				if depth == 1 {
					args = append(args, cur)
					cur = nil
					continue
				}
			}
		}
		cur = append(cur, t)
	}
	return nil, 0, false
}

// substitute replaces a function-like macro's parameters in its body by the arguments.
// pasteMarker stands for the ## operator in a macro body.
const pasteMarker = "__netlock_token_paste__"

func substitute(m *macro, args [][]Token) []Token {
	var out []Token
	paste := false
	for _, t := range m.body {
		if t.Kind == TIdent && t.Text == pasteMarker {
			paste = true
			continue
		}
		toks := []Token{t}
		if t.Kind == TIdent {
			if k := indexOf(m.params, t.Text); k >= 0 && args != nil {
				toks = args[k]
			}
		}
		if paste && len(out) > 0 && len(toks) > 0 {
			// a ## b: the last token so far and the first of b become one token, when their
			// texts form one.
			left := out[len(out)-1]
			var errs ErrorList
			joined := lexLine(left.Text+toks[0].Text, left.Pos.File, left.Pos.Line, &errs)
			if len(joined) == 1 && len(errs) == 0 {
				joined[0].Pos = left.Pos
				out[len(out)-1] = joined[0]
				toks = toks[1:]
			}
		}
		paste = false
		out = append(out, toks...)
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// evalIf evaluates a #if/#elif expression: integers, defined(X), defined X, macros, !, &&, ||,
// comparisons and parentheses. Unknown identifiers are 0, as in C.
func (pp *preprocessor) evalIf(arg string, pos Pos, lineNo int, path string) bool {
	var errs ErrorList
	pad := strings.Repeat(" ", pos.Col)
	toks := lexLine(pad+arg, path, lineNo, &errs)
	// Replace defined(X) before macro expansion.
	var pre []Token
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind == TIdent && t.Text == "defined" {
			name := ""
			if i+1 < len(toks) && toks[i+1].Text == "(" && i+3 < len(toks) && toks[i+3].Text == ")" {
				name = toks[i+2].Text
				i += 3
			} else if i+1 < len(toks) {
				name = toks[i+1].Text
				i++
			}
			v := "0"
			if _, ok := pp.macros[name]; ok {
				v = "1"
			}
			pre = append(pre, Token{Kind: TInt, Text: v, Pos: t.Pos, Lit: &IntLit{Value: bigInt(int64(v[0] - '0'))}})
			continue
		}
		pre = append(pre, t)
	}
	exp := pp.expand(nil, pre, nil, Pos{})
	e := &ifEval{toks: exp, max: pp.maxNest}
	v := e.or()
	if e.deep {
		pp.errs = append(pp.errs, errorf(pos, "%s: #if expression of more than %d levels", errNesting, pp.maxNest))
		return false
	}
	if e.bad || e.i != len(e.toks) || len(errs) > 0 {
		pp.errs = append(pp.errs, errorf(pos, "invalid #if expression %q", arg))
		return false
	}
	return v != 0
}

type ifEval struct {
	toks []Token
	i    int
	bad  bool
	// depth is the nesting of unary operators and parentheses being evaluated; past max the
	// evaluation stops with deep set.
	depth, max int
	deep       bool
}

func (e *ifEval) peek() string {
	if e.i < len(e.toks) {
		return e.toks[e.i].Text
	}
	return ""
}

func (e *ifEval) or() int64 {
	v := e.and()
	for e.peek() == "||" {
		e.i++
		r := e.and()
		v = b2i(v != 0 || r != 0)
	}
	return v
}

func (e *ifEval) and() int64 {
	v := e.cmp()
	for e.peek() == "&&" {
		e.i++
		r := e.cmp()
		v = b2i(v != 0 && r != 0)
	}
	return v
}

func (e *ifEval) cmp() int64 {
	v := e.unary()
	for {
		op := e.peek()
		if op == ">" && e.i+1 < len(e.toks) && e.toks[e.i+1].Text == "=" {
			op = ">="
			e.i++
		}
		switch op {
		case "==", "!=", "<", ">", "<=", ">=":
		default:
			return v
		}
		e.i++
		r := e.unary()
		switch op {
		case "==":
			v = b2i(v == r)
		case "!=":
			v = b2i(v != r)
		case "<":
			v = b2i(v < r)
		case ">":
			v = b2i(v > r)
		case "<=":
			v = b2i(v <= r)
		case ">=":
			v = b2i(v >= r)
		}
	}
}

func (e *ifEval) unary() int64 {
	if e.i >= len(e.toks) || e.deep {
		e.bad = true
		return 0
	}
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > e.max {
		e.deep, e.bad = true, true
		return 0
	}
	t := e.toks[e.i]
	e.i++
	switch {
	case t.Text == "!":
		return b2i(e.unary() == 0)
	case t.Text == "(":
		v := e.or()
		if e.peek() != ")" {
			e.bad = true
		}
		e.i++
		return v
	case t.Kind == TInt:
		if t.Lit != nil && t.Lit.Value.IsInt64() {
			return t.Lit.Value.Int64()
		}
		n, _ := strconv.ParseInt(t.Text, 0, 64)
		return n
	case t.Kind == TIdent:
		return 0
	}
	e.bad = true
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
