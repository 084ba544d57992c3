// Package config is the strict configuration loader of every netlock command that reads
// configuration (netlock server today; the controller too). A command declares its keys once in a
// [Schema]; [Schema.AddFlags] defines the command-line flags of the keys that have one, and
// [Schema.Load] merges, in increasing precedence, the defaults, a config file (YAML, TOML or JSON,
// read with viper), the environment (PREFIX_ + the key in upper case with dots as underscores:
// NETLOCK_LEASE_DEFAULT) and the flags that were set.
//
// Strict means:
//   - a key in the file that the schema does not declare is an error (a typo such as "lese:" stops
//     the program, with the closest declared key as a hint);
//   - a value of the wrong type is an error (lease.default: "abc", shards: "many", a number where a
//     duration with a unit is needed, a scalar where a section is needed);
//   - a value that makes no sense is an error: each [Key] may carry a Check, and the command's own
//     cross-key checks report through [Values.Errorf];
//   - a key renamed keeps its former names ([Key.Deprecated], [Key.DeprecatedFlags]): they still
//     work, with a warning for the command to print ([Values.Warnings]), and setting both names
//     in one source is an error;
//
// and every error names the key and where its value came from: "config file f.yaml: key
// lease.default: ...", "environment NETLOCK_SHARDS: ...", "flag --lease: ...". Usage:
//
//	var schema = config.Schema{EnvPrefix: "NETLOCK", Keys: []config.Key{
//		{Name: "lease.default", Type: config.Duration, Default: 10 * time.Second, Flag: "lease",
//			Usage: "default lease", Check: config.Positive},
//	}}
//	schema.AddFlags(cmd.Flags())
//	vals, err := schema.Load(file, cmd.Flags()) // file "" : no file
//	lease := vals.Duration("lease.default")
//	if lease > max { return vals.Errorf("lease.default", "%v above %v", lease, max) }
package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/netlock-go/netlock/wire"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Type is the type of a key's value.
type Type uint8

// Types of values. In a file each must be written as its own type (strings quoted where YAML would
// read a number); in the environment every value is text, parsed as the type says.
const (
	String   Type = iota + 1 // text
	Int                      // a whole number (int)
	Uint                     // a whole number >= 0 (uint64)
	Bool                     // true or false
	Duration                 // text in Go syntax with a unit: "250ms", "10s", "1h"
	Strings                  // a list of text; in the environment and flags, comma-separated
	Table                    // a section with sub-keys the command checks itself (e.g. per-tenant quotas)
)

var typeNames = [...]string{String: "a string", Int: "an integer", Uint: "a non-negative integer", Bool: "true or false",
	Duration: `a duration with a unit (e.g. "250ms", "10s")`, Strings: "a list of strings", Table: "a section"}

func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Key declares one configuration key.
type Key struct {
	// Name is the dotted path of the key in a file: "lease.default" is default under lease.
	Name string
	Type Type
	// Default is the value when no source sets the key: string, int, uint64, bool,
	// time.Duration, []string, or nil (Table).
	Default any
	// Flag, if set, is the name of the command-line flag bound to the key (AddFlags defines it).
	Flag  string
	Usage string
	// Check, if set, rejects a nonsensical value (it gets the typed value: int, uint64,
	// time.Duration, ...). Its error message is prefixed with the key and the source.
	Check func(v any) error
	// Deprecated lists former names of the key (dotted paths, like Name). A config file or an
	// environment variable that uses one still sets the key, and Load adds a warning naming the
	// new name ([Values.Warnings]); one source that sets the key under two names is an error.
	Deprecated []string
	// DeprecatedFlags lists former names of Flag: AddFlags defines each as a hidden flag that
	// still sets the key, with a warning, as Deprecated does.
	DeprecatedFlags []string
}

// Schema is the set of keys of one command.
type Schema struct {
	// EnvPrefix is the prefix of the environment variables ("NETLOCK").
	EnvPrefix string
	Keys      []Key
}

// OtherEnv are the variables with the NETLOCK_ prefix that Load accepts in the environment
// besides the schema's own keys: the tests' opt-ins and knobs (docs/p4.md and the tests that
// read them), and what a program with several commands adds at start-up (cmd/netlock adds
// every command's key variables, so that one shell may configure all of them). Every other
// NETLOCK_ variable stops the command. Not safe to change while commands load.
var OtherEnv = []string{"NETLOCK_OPEN_TOFINO", "NETLOCK_P4C_DIR", "NETLOCK_P4C_SAMPLES", "NETLOCK_P4C_VERBOSE",
	"NETLOCK_SEED", "NETLOCK_PORT_CHILD", "NETLOCK_TEST_RUN_MAIN", "NETLOCK_TEST_ADDR", "NETLOCK_TEST_HELPER",
	"NETLOCK_TESTENV_X", "NETLOCK_TESTENV_CHILD", "NETLOCK_P4TOOLS"}

// CheckEnv rejects every variable of environ (KEY=VALUE, as os.Environ) that has the schema's
// prefix but is neither a key's variable nor one of also: a mistyped variable
// (NETLOCK_LEASE_DEFUALT) would otherwise be ignored silently. The error names the variable and
// the closest known variable.
func (s *Schema) CheckEnv(environ []string, also ...string) error {
	prefix := s.EnvPrefix + "_"
	known := map[string]bool{}
	for _, n := range s.EnvNames() {
		known[n] = true
	}
	for _, a := range also {
		known[a] = true
	}
	var names []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, prefix) && !known[name] {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	msg := fmt.Sprintf("environment %s: unknown variable", names[0])
	best, bestD := "", math.MaxInt
	cands := slices.Sorted(maps.Keys(known))
	for _, c := range cands {
		if d := editDistance(names[0], c); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" && bestD <= max(2, len(names[0])/4) {
		msg += fmt.Sprintf(" (did you mean %s?)", best)
	} else {
		msg += " (no netlock configuration key has it)"
	}
	if len(names) > 1 {
		msg += fmt.Sprintf("; also unknown: %s", strings.Join(names[1:], ", "))
	}
	return errors.New(msg)
}

func (s *Schema) key(name string) *Key {
	for i := range s.Keys {
		if s.Keys[i].Name == name {
			return &s.Keys[i]
		}
	}
	return nil
}

// EnvName returns the environment variable of a key: NETLOCK_LEASE_DEFAULT.
func (s *Schema) EnvName(name string) string {
	return s.EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
}

// EnvNames returns the environment variables of every key, its deprecated names' included.
func (s *Schema) EnvNames() []string {
	var out []string
	for _, k := range s.Keys {
		out = append(out, s.EnvName(k.Name))
		for _, d := range k.Deprecated {
			out = append(out, s.EnvName(d))
		}
	}
	return out
}

// AddFlags defines a flag for every key that has one, with the key's default and usage.
// A key's DeprecatedFlags are defined too, hidden from the usage.
func (s *Schema) AddFlags(fs *pflag.FlagSet) {
	for _, k := range s.Keys {
		if k.Flag == "" {
			continue
		}
		addFlag(fs, &k, k.Flag, k.Usage)
		for _, old := range k.DeprecatedFlags {
			addFlag(fs, &k, old, fmt.Sprintf("deprecated: use --%s", k.Flag))
			if err := fs.MarkHidden(old); err != nil {
				panic(fmt.Sprintf("config: key %s: %v", k.Name, err))
			}
		}
	}
}

func addFlag(fs *pflag.FlagSet, k *Key, name, usage string) {
	switch k.Type {
	case String:
		fs.String(name, asString(k.Default), usage)
	case Int:
		d, _ := k.Default.(int)
		fs.Int(name, d, usage)
	case Uint:
		d, _ := k.Default.(uint64)
		fs.Uint64(name, d, usage)
	case Bool:
		d, _ := k.Default.(bool)
		fs.Bool(name, d, usage)
	case Duration:
		d, _ := k.Default.(time.Duration)
		fs.Duration(name, d, usage)
	case Strings:
		d, _ := k.Default.([]string)
		fs.StringSlice(name, d, usage)
	default:
		panic(fmt.Sprintf("config: key %s: type %v cannot have a flag", k.Name, k.Type))
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// Values are the loaded values of a schema's keys, each with its source.
type Values struct {
	schema   *Schema
	vals     map[string]any
	source   map[string]string
	warnings []string
}

// Warnings returns one line per deprecated name that set a key ("flag --metrics-addr is
// deprecated: use --metrics-listen"), for the command to print or log.
func (v *Values) Warnings() []string { return v.warnings }

// Load reads the configuration: defaults, then the file (if file != ""), then the environment,
// then the flags of fs that were set (fs may be nil). It fails on the first unknown key, wrong
// type or failed Check, naming the key and its source, and on an environment variable with the
// schema's prefix that is neither a key's nor in OtherEnv (CheckEnv).
func (s *Schema) Load(file string, fs *pflag.FlagSet) (*Values, error) {
	var fv *viper.Viper
	if file != "" {
		fv = viper.New()
		fv.SetConfigFile(file)
		if err := fv.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config file %s: %w", file, err)
		}
	}
	return s.loadFrom(fv, "config file "+file, fs, true)
}

// LoadBytes is Load from the content of a file in format ("yaml", "toml" or "json"), without
// environment or flags; errors name the source "config (FORMAT)".
func (s *Schema) LoadBytes(data []byte, format string) (*Values, error) {
	fv := viper.New()
	fv.SetConfigType(format)
	if err := fv.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("config (%s): %w", format, err)
	}
	return s.loadFrom(fv, "config ("+format+")", nil, false)
}

func (s *Schema) loadFrom(fv *viper.Viper, fileSrc string, fs *pflag.FlagSet, env bool) (*Values, error) {
	v := &Values{schema: s, vals: map[string]any{}, source: map[string]string{}}
	if env && s.EnvPrefix != "" {
		if err := s.CheckEnv(os.Environ(), OtherEnv...); err != nil {
			return nil, err
		}
	}
	if fv != nil {
		if err := s.checkFileKeys(fv, fileSrc); err != nil {
			return nil, err
		}
	}
	for i := range s.Keys {
		k := &s.Keys[i]
		var raw any
		src, fromText := "default", false
		raw = k.Default
		if fv != nil {
			name, err := v.pick(k, fileSrc+": ", "key ", k.Name, k.Deprecated, fv.IsSet)
			if err != nil {
				return nil, err
			}
			if name != "" {
				raw, src = fv.Get(name), fileSrc
			}
		}
		if env {
			name, err := v.pick(k, "", "environment ", s.EnvName(k.Name), envNames(s, k.Deprecated), func(n string) bool {
				_, ok := os.LookupEnv(n)
				return ok
			})
			if err != nil {
				return nil, err
			}
			if name != "" {
				if k.Type == Table {
					return nil, fmt.Errorf("environment %s: key %s is a section: set it in the config file", name, k.Name)
				}
				raw, src, fromText = os.Getenv(name), "environment "+name, true
			}
		}
		if fs != nil && k.Flag != "" {
			changed := func(n string) bool { f := fs.Lookup(n); return f != nil && f.Changed }
			name, err := v.pick(k, "", "flag --", k.Flag, k.DeprecatedFlags, changed)
			if err != nil {
				return nil, err
			}
			if name != "" {
				raw, src = flagValue(fs.Lookup(name)), "flag --"+name
			}
		}
		val, err := convert(k, raw, fromText)
		if err == nil && k.Check != nil && val != nil {
			err = k.Check(val)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: key %s: %w", src, k.Name, err)
		}
		v.vals[k.Name], v.source[k.Name] = val, src
	}
	return v, nil
}

// pick returns which of a key's names (current, or one of deprecated) a source sets ("" for none),
// adding a warning for a deprecated one. Two names set in one source are an error. where names
// the source ("config file F: ", or "" when kind does), kind the names' kind ("key ", "flag --",
// "environment ").
func (v *Values) pick(k *Key, where, kind, current string, deprecated []string, set func(string) bool) (string, error) {
	name := ""
	if set(current) {
		name = current
	}
	for _, d := range deprecated {
		if !set(d) {
			continue
		}
		if name != "" {
			return "", fmt.Errorf("%s%s%s and %s%s both set key %s: set only %s%s", where, kind, name, kind, d,
				k.Name, kind, current)
		}
		name = d
		v.warnings = append(v.warnings, fmt.Sprintf("%s%s%s is deprecated: use %s%s", where, kind, d, kind, current))
	}
	return name, nil
}

func envNames(s *Schema, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = s.EnvName(n)
	}
	return out
}

func flagValue(f *pflag.Flag) any {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	switch f.Value.Type() {
	case "int":
		n, _ := strconv.Atoi(f.Value.String())
		return n
	case "uint64":
		n, _ := strconv.ParseUint(f.Value.String(), 10, 64)
		return n
	case "bool":
		return f.Value.String() == "true"
	case "duration":
		d, _ := time.ParseDuration(f.Value.String())
		return d
	}
	return f.Value.String()
}

// checkFileKeys rejects every key of the file that the schema does not declare, and scalars
// where the schema has a section.
func (s *Schema) checkFileKeys(fv *viper.Viper, src string) error {
	keys := fv.AllKeys()
	slices.Sort(keys)
	for _, fk := range keys {
		if s.known(fk) {
			continue
		}
		// A scalar where the schema has a section ("lease: abc" for lease.default, lease.max).
		if sub := s.under(fk); len(sub) > 0 {
			return fmt.Errorf("%s: key %s: want a section with %s, got %v", src, fk, strings.Join(sub, ", "), fv.Get(fk))
		}
		msg := fmt.Sprintf("%s: unknown key %s", src, fk)
		if near := s.nearest(fk); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		return errors.New(msg)
	}
	return nil
}

// known reports whether a flattened file key is declared: a key itself, or anything under a
// Table key.
func (s *Schema) known(fk string) bool {
	for _, k := range s.Keys {
		if k.Name == fk || (k.Type == Table && strings.HasPrefix(fk, k.Name+".")) || slices.Contains(k.Deprecated, fk) {
			return true
		}
	}
	return false
}

// under lists the declared keys inside the section fk.
func (s *Schema) under(fk string) []string {
	var sub []string
	for _, k := range s.Keys {
		if strings.HasPrefix(k.Name, fk+".") {
			sub = append(sub, k.Name)
		}
	}
	return sub
}

// nearest returns the declared key closest to fk by edit distance, if it is close (a typo).
func (s *Schema) nearest(fk string) string {
	best, bestD := "", math.MaxInt
	for _, k := range s.Keys {
		for _, cand := range []string{k.Name, strings.SplitN(k.Name, ".", 2)[0]} {
			if d := editDistance(fk, cand); d < bestD {
				best, bestD = cand, d
			}
		}
	}
	if bestD <= max(2, len(fk)/4) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// convert turns raw (a file's decoded value, an environment string when text, a flag's value or
// the default) into the key's type.
func convert(k *Key, raw any, text bool) (any, error) {
	bad := func() error {
		return fmt.Errorf("%v is not %v", quote(raw), k.Type)
	}
	if text {
		str := strings.TrimSpace(raw.(string))
		switch k.Type {
		case String:
			return raw.(string), nil
		case Strings:
			var out []string
			for _, f := range strings.Split(str, ",") {
				if f = strings.TrimSpace(f); f != "" {
					out = append(out, f)
				}
			}
			return out, nil
		case Int:
			n, err := strconv.Atoi(str)
			if err != nil {
				return nil, bad()
			}
			return n, nil
		case Uint:
			n, err := strconv.ParseUint(str, 10, 64)
			if err != nil {
				return nil, bad()
			}
			return n, nil
		case Bool:
			b, err := strconv.ParseBool(str)
			if err != nil {
				return nil, bad()
			}
			return b, nil
		case Duration:
			d, err := time.ParseDuration(str)
			if err != nil {
				return nil, bad()
			}
			return d, nil
		}
		return nil, bad()
	}
	switch k.Type {
	case String:
		if s, ok := raw.(string); ok {
			return s, nil
		}
	case Int:
		if n, ok := wholeNumber(raw); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			return int(n), nil
		}
	case Uint:
		if u, ok := raw.(uint64); ok {
			return u, nil
		}
		if n, ok := wholeNumber(raw); ok && n >= 0 {
			return uint64(n), nil
		}
	case Bool:
		if b, ok := raw.(bool); ok {
			return b, nil
		}
	case Duration:
		switch x := raw.(type) {
		case time.Duration:
			return x, nil
		case string:
			if d, err := time.ParseDuration(strings.TrimSpace(x)); err == nil {
				return d, nil
			}
		}
	case Strings:
		switch x := raw.(type) {
		case nil:
			return []string(nil), nil
		case []string:
			return x, nil
		case []any:
			out := make([]string, 0, len(x))
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("list item %v is not a string", quote(e))
				}
				out = append(out, s)
			}
			return out, nil
		}
	case Table:
		switch x := raw.(type) {
		case nil:
			return nil, nil
		case map[string]any:
			return x, nil
		}
	}
	return nil, bad()
}

// wholeNumber reads the integer kinds a decoder produces (and floats without a fraction: JSON).
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

func quote(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%v", v)
}

func (v *Values) get(name string, t Type) any {
	k := v.schema.key(name)
	if k == nil || k.Type != t {
		panic(fmt.Sprintf("config: no key %s of %v", name, t))
	}
	return v.vals[name]
}

// String returns a String key's value. Getting an undeclared key, or one of another type,
// panics: that is a bug of the command, not of its configuration.
func (v *Values) String(name string) string { return v.get(name, String).(string) }

// Int returns an Int key's value.
func (v *Values) Int(name string) int { return v.get(name, Int).(int) }

// Uint returns a Uint key's value.
func (v *Values) Uint(name string) uint64 { return v.get(name, Uint).(uint64) }

// Bool returns a Bool key's value.
func (v *Values) Bool(name string) bool { return v.get(name, Bool).(bool) }

// Duration returns a Duration key's value.
func (v *Values) Duration(name string) time.Duration { return v.get(name, Duration).(time.Duration) }

// Strings returns a Strings key's value.
func (v *Values) Strings(name string) []string {
	s, _ := v.get(name, Strings).([]string)
	return s
}

// Table returns a Table key's value (nil if unset): the section's decoded map.
func (v *Values) Table(name string) map[string]any {
	m, _ := v.get(name, Table).(map[string]any)
	return m
}

// Source says where a key's value came from: "default", "config file F", "environment VAR" or
// "flag --NAME".
func (v *Values) Source(name string) string { return v.source[name] }

// Errorf returns an error about key name prefixed with the key and its source, for the
// command's own checks (a value that makes no sense together with another). name may be a path
// inside a Table key ("quotas.7.max_rate"); the source is then the Table's.
func (v *Values) Errorf(name, format string, args ...any) error {
	src := ""
	for n := name; src == "" && n != ""; {
		src = v.source[n]
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	return fmt.Errorf("%s: key %s: %s", src, name, fmt.Sprintf(format, args...))
}

// Common checks.

// Positive rejects a zero or negative number or duration.
func Positive(v any) error {
	switch x := v.(type) {
	case int:
		if x <= 0 {
			return fmt.Errorf("%d: must be positive", x)
		}
	case time.Duration:
		if x <= 0 {
			return fmt.Errorf("%v: must be positive", x)
		}
	case uint64:
		if x == 0 {
			return errors.New("0: must be positive")
		}
	}
	return nil
}

// NonNegative rejects a negative number or duration.
func NonNegative(v any) error {
	switch x := v.(type) {
	case int:
		if x < 0 {
			return fmt.Errorf("%d: must not be negative", x)
		}
	case time.Duration:
		if x < 0 {
			return fmt.Errorf("%v: must not be negative", x)
		}
	}
	return nil
}

// Range returns a check that an int lies in [lo, hi].
func Range(lo, hi int) func(any) error {
	return func(v any) error {
		if n, ok := v.(int); ok && (n < lo || n > hi) {
			return fmt.Errorf("%d: must be in %d..%d", n, lo, hi)
		}
		return nil
	}
}

// OneOf returns a check that a string is one of the choices.
func OneOf(choices ...string) func(any) error {
	return func(v any) error {
		if s, ok := v.(string); ok && !slices.Contains(choices, s) {
			return fmt.Errorf("%q: must be one of %s", s, strings.Join(choices, ", "))
		}
		return nil
	}
}

// RackKey reads the rack key from the key textKey (16 hexadecimal digits) or the file named by
// the key fileKey (which keeps the secret out of the config file, the environment and the
// process list); at most one may be set, and neither gives 0 (no key). Errors name the key and
// never contain the key's text.
func RackKey(v *Values, textKey, fileKey string) (wire.Key, error) {
	text, file := v.String(textKey), v.String(fileKey)
	switch {
	case text != "" && file != "":
		return 0, v.Errorf(fileKey, "set %s or %s, not both (%s comes from %s)", textKey, fileKey, textKey,
			v.Source(textKey))
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, v.Errorf(fileKey, "%v", err)
		}
		k, err := wire.ParseKey(string(b))
		if err != nil {
			return 0, v.Errorf(fileKey, "%s: %v", file, err)
		}
		return k, nil
	case text != "":
		k, err := wire.ParseKey(text)
		if err != nil {
			return 0, v.Errorf(textKey, "%v", err)
		}
		return k, nil
	}
	return 0, nil
}
