package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func testSchema() *Schema {
	return &Schema{EnvPrefix: "CFGTEST", Keys: []Key{
		{Name: "name", Type: String, Default: "x", Flag: "name"},
		{Name: "count", Type: Int, Default: 2, Flag: "count", Check: Range(1, 10)},
		{Name: "epoch", Type: Uint, Default: uint64(0), Flag: "epoch"},
		{Name: "on", Type: Bool, Default: false, Flag: "on"},
		{Name: "wait.short", Type: Duration, Default: time.Second, Flag: "short", Check: Positive},
		{Name: "wait.long", Type: Duration, Default: time.Minute},
		{Name: "peers", Type: Strings, Flag: "peer"},
		{Name: "table", Type: Table},
	}}
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadSources(t *testing.T) {
	s := testSchema()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	s.AddFlags(fs)
	f := write(t, "c.yaml", "name: file\ncount: 3\nwait: {short: 2s}\npeers: [a, b]\ntable: {k: {v: 1}}\n")
	t.Setenv("CFGTEST_COUNT", "4")
	t.Setenv("CFGTEST_WAIT_LONG", "5m")
	if err := fs.Parse([]string{"--name", "flag", "--peer", "c,d", "--epoch", "9"}); err != nil {
		t.Fatal(err)
	}
	v, err := s.Load(f, fs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, src  string
		got, want any
	}{
		{"name", "flag --name", v.String("name"), "flag"},
		{"count", "environment CFGTEST_COUNT", v.Int("count"), 4},
		{"epoch", "flag --epoch", v.Uint("epoch"), uint64(9)},
		{"on", "default", v.Bool("on"), false},
		{"wait.short", "config file " + f, v.Duration("wait.short"), 2 * time.Second},
		{"wait.long", "environment CFGTEST_WAIT_LONG", v.Duration("wait.long"), 5 * time.Minute},
		{"peers", "flag --peer", strings.Join(v.Strings("peers"), ","), "c,d"},
	} {
		if c.got != c.want || v.Source(c.key) != c.src {
			t.Errorf("%s = %v from %q, want %v from %q", c.key, c.got, v.Source(c.key), c.want, c.src)
		}
	}
	if v.Table("table")["k"] == nil {
		t.Errorf("table %v", v.Table("table"))
	}
	if err := v.Errorf("table.k.v", "bad"); !strings.Contains(err.Error(), "config file "+f+": key table.k.v: bad") {
		t.Errorf("Errorf inside a table: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, env, flag, want string
	}{
		{name: "unknown", file: "nmae: x", want: "unknown key nmae (did you mean name?)"},
		{name: "unknown nested", file: "wait: {shrot: 1s}", want: "unknown key wait.shrot (did you mean wait.short?)"},
		{name: "scalar section", file: "wait: 3", want: "key wait: want a section with wait.short, wait.long"},
		{name: "type", file: "count: three", want: `key count: "three" is not an integer`},
		{name: "string", file: "name: 12", want: "key name: 12 is not a string"},
		{name: "duration number", file: "wait: {long: 60}", want: "key wait.long: 60 is not a duration"},
		{name: "check", file: "count: 11", want: "key count: 11: must be in 1..10"},
		{name: "zero duration", file: "wait: {short: 0s}", want: "key wait.short: 0s: must be positive"},
		{name: "negative uint", file: "epoch: -1", want: "key epoch"},
		{name: "env type", env: "CFGTEST_ON=maybe", want: `environment CFGTEST_ON: key on: "maybe" is not true or false`},
		{name: "env check", env: "CFGTEST_COUNT=0", want: "environment CFGTEST_COUNT: key count: 0: must be in 1..10"},
		{name: "env table", env: "CFGTEST_TABLE=x", want: "key table is a section"},
		{name: "flag check", flag: "--count=20", want: "flag --count: key count: 20: must be in 1..10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSchema()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			s.AddFlags(fs)
			var file string
			if tc.file != "" {
				file = write(t, "c.yaml", tc.file)
			}
			if tc.env != "" {
				k, v, _ := strings.Cut(tc.env, "=")
				t.Setenv(k, v)
			}
			if tc.flag != "" {
				if err := fs.Parse([]string{tc.flag}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := s.Load(file, fs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if tc.file != "" && !strings.Contains(err.Error(), file) {
				t.Fatalf("error %v does not name the file", err)
			}
		})
	}
	if _, err := testSchema().Load(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil {
		t.Error("a missing file was accepted")
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"lese", "lease", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"same", "same", 0}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// TestEnvStrict: a variable with the schema's prefix that is no key's stops Load, naming the
// variable and the closest key's variable; a wrong type in a key's variable names the variable.
func TestEnvStrict(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" : Load succeeds
	}{
		{"typo", map[string]string{"CFGTEST_WAIT_SHROT": "1s"},
			"environment CFGTEST_WAIT_SHROT: unknown variable (did you mean CFGTEST_WAIT_SHORT?)"},
		{"plural", map[string]string{"CFGTEST_COUNTZ": "3"}, "environment CFGTEST_COUNTZ: unknown variable (did you mean CFGTEST_COUNT?)"},
		{"far off", map[string]string{"CFGTEST_SOMETHING_ELSE_ENTIRELY": "1"},
			"environment CFGTEST_SOMETHING_ELSE_ENTIRELY: unknown variable (no netlock configuration key has it)"},
		{"two", map[string]string{"CFGTEST_B": "1", "CFGTEST_A": "1"}, "environment CFGTEST_A: unknown variable"},
		{"wrong type", map[string]string{"CFGTEST_COUNT": "many"}, "environment CFGTEST_COUNT: key count:"},
		{"wrong duration", map[string]string{"CFGTEST_WAIT_SHORT": "5"}, "environment CFGTEST_WAIT_SHORT: key wait.short:"},
		{"wrong bool", map[string]string{"CFGTEST_ON": "yes please"}, "environment CFGTEST_ON: key on:"},
		{"known", map[string]string{"CFGTEST_COUNT": "3", "CFGTEST_ON": "true"}, ""},
		{"other prefix", map[string]string{"CFGTESTX_COUNTZ": "3"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := testSchema().Load("", nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("Load accepted %v, want an error %q", tc.env, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

// TestCheckEnvAlso: the variables passed as also (OtherEnv for Load) are accepted.
func TestCheckEnvAlso(t *testing.T) {
	s := testSchema()
	env := []string{"CFGTEST_KNOB=1", "PATH=/bin", "CFGTEST_COUNT=2"}
	if err := s.CheckEnv(env, "CFGTEST_KNOB"); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckEnv(env); err == nil || !strings.Contains(err.Error(), "CFGTEST_KNOB") {
		t.Fatalf("CheckEnv without also: %v, want an error naming CFGTEST_KNOB", err)
	}
}

// TestDeprecatedNames: a key's former name still sets it in a file, the environment and a flag,
// with a warning naming the new name; the new name sets it without one; both names in one source
// are an error; the former flag is hidden from the usage.
func TestDeprecatedNames(t *testing.T) {
	schema := func() *Schema {
		return &Schema{EnvPrefix: "CFGTEST", Keys: []Key{
			{Name: "metrics_listen", Type: String, Default: "", Flag: "metrics-listen",
				Deprecated: []string{"metrics_addr"}, DeprecatedFlags: []string{"metrics-addr"}},
		}}
	}
	load := func(file string, env map[string]string, args ...string) (*Values, *pflag.FlagSet, error) {
		t.Helper()
		s := schema()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		s.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		for k, v := range env {
			t.Setenv(k, v)
		}
		v, err := s.Load(file, fs)
		return v, fs, err
	}
	for _, c := range []struct {
		name      string
		file      string
		env       map[string]string
		args      []string
		want, src string
		warning   string
	}{
		{name: "new flag", args: []string{"--metrics-listen", ":1"}, want: ":1", src: "flag --metrics-listen"},
		{name: "old flag", args: []string{"--metrics-addr", ":2"}, want: ":2", src: "flag --metrics-addr",
			warning: "flag --metrics-addr is deprecated: use flag --metrics-listen"},
		{name: "old file key", file: "metrics_addr: \":3\"\n", want: ":3", src: "config file",
			warning: "key metrics_addr is deprecated: use key metrics_listen"},
		{name: "old variable", env: map[string]string{"CFGTEST_METRICS_ADDR": ":4"}, want: ":4",
			src:     "environment CFGTEST_METRICS_ADDR",
			warning: "environment CFGTEST_METRICS_ADDR is deprecated: use environment CFGTEST_METRICS_LISTEN"},
		{name: "new flag over old file key", file: "metrics_addr: \":5\"\n", args: []string{"--metrics-listen", ":6"},
			want: ":6", src: "flag --metrics-listen", warning: "key metrics_addr is deprecated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := ""
			if c.file != "" {
				file = write(t, "c.yaml", c.file)
			}
			v, _, err := load(file, c.env, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String("metrics_listen"); got != c.want || !strings.HasPrefix(v.Source("metrics_listen"), c.src) {
				t.Errorf("metrics_listen = %q from %q, want %q from %q", got, v.Source("metrics_listen"), c.want, c.src)
			}
			w := strings.Join(v.Warnings(), "\n")
			if (c.warning == "") != (w == "") || !strings.Contains(w, c.warning) {
				t.Errorf("warnings %q, want %q", w, c.warning)
			}
		})
	}
	t.Run("both flags", func(t *testing.T) {
		_, _, err := load("", nil, "--metrics-listen", ":1", "--metrics-addr", ":2")
		if err == nil || !strings.Contains(err.Error(), "set only flag --metrics-listen") {
			t.Errorf("both flags: %v, want an error naming the one to keep", err)
		}
	})
	t.Run("both file keys", func(t *testing.T) {
		_, _, err := load(write(t, "c.yaml", "metrics_addr: a\nmetrics_listen: b\n"), nil)
		if err == nil || !strings.Contains(err.Error(), "metrics_addr") {
			t.Errorf("both keys: %v, want an error", err)
		}
	})
	t.Run("usage", func(t *testing.T) {
		_, fs, err := load("", nil)
		if err != nil {
			t.Fatal(err)
		}
		if u := fs.FlagUsages(); strings.Contains(u, "metrics-addr") || !strings.Contains(u, "metrics-listen") {
			t.Errorf("usage shows the former flag or hides the new one:\n%s", u)
		}
	})
}
