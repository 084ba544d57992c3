package tofino

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file runs the real Tofino compiler (p4c's open-sourced Tofino backend, p4c-barefoot) and
// reads the resource report it writes, so that the estimate of this package can be checked
// against it (docs/dataplane.md, "The real compiler").

// CompileOptions says how to run the compiler.
type CompileOptions struct {
	// Compiler is the path of p4c-barefoot.
	Compiler string
	// Target is "tofino" (Tofino 1) or "tofino2"; Arch "tna" or "t2na".
	Target, Arch string
	// Defines are -D macros (__TARGET_TOFINO__ is set from Target).
	Defines map[string]string
	// IncludeDirs are -I directories: a program's own includes, and core.p4's and tna.p4's where
	// the compiler does not find them beside its executable (testenv.RealToolsIncludes).
	IncludeDirs []string
	// OutDir receives the compiler's output (pipe/logs/...); it is created.
	OutDir string
	// Flags are further options, passed before the program (e.g. "--alt-phv-alloc": table
	// placement on a trivial PHV allocation first, the real allocation after it, so that a
	// program whose PHV does not fit still gets the compiler's placement and critical path).
	Flags []string
	// Timeout bounds the run (0: 30 minutes).
	Timeout time.Duration
	// Assembler is the path of bfas, the Tofino assembler (p4c's backends/tofino/bf-asm), or
	// "" to stop at the compiler's assembly (pipe/*.bfa). When set, Compile assembles it into
	// OutDir/asm (the target's .bin and context.json): bf-p4c's "compilation_succeeded" is
	// the assembly's, and bfas refuses what the compiler let through (an action bus slot,
	// 2026-12-01).
	Assembler string
}

// Report is what the compiler reported about one program, or about one Pipeline of a program of
// several (CompilePipelines).
type Report struct {
	// Pipeline is the Pipeline's name, the directory of its output under OutDir ("pipe" for
	// Pipeline(...) pipe; Switch(pipe) main;).
	Pipeline string
	// Output is the compiler's stdout and stderr.
	Output string
	// Elapsed is the compiler's run time.
	Elapsed time.Duration
	// Stages is the number of MAU stages the tables were allocated to (table_summary.log:
	// "Number of stages in table allocation"), AvailableStages the pipe's (resources.json).
	Stages, AvailableStages int
	// CompilerVersion is resources.json's compiler_version.
	CompilerVersion string
	// Per-pipe totals over the MAU stages of resources.json: SRAM and TCAM units, meter ALUs
	// (stateful ALUs and meters), hash bits and hash distribution units, logical tables, exact
	// match search buses, VLIW instruction slots. Per stage in PerStage.
	SRAMs, TCAMs, MeterALUs, HashBits, HashDist, LogicalTables, VLIW int
	PerStage                                                         []StageUse
	// PHVUse is the PHV allocation of pipe/logs/phv.json; zero when the compiler wrote none.
	PHVUse PHVUse
	// SuperCluster is bf-p4c's largest super cluster of each gress (0 ingress, 1 egress), from
	// the clustering results Compile asks for (-Tmake_clusters:1, in phv_allocation_0.log); zero
	// when the compiler did not get that far. Compile reads it even when the compiler fails or
	// runs out of time: it is written before the PHV allocation, the step a program's super
	// clusters can make run for hours.
	SuperCluster [2]ClusterUse
	// Unallocated is, when the compiler refused the program because its fields do not fit the
	// PHV, the field slices left over by gress; zero otherwise. PHVUse then holds what the
	// failed allocation placed (bf-p4c writes phv.json all the same).
	Unallocated [2]Unallocated
	// Placement is each round of table placement the compiler reported (table_summary.log,
	// which Compile asks for with -Ttable_summary:1), in order; read even when the compiler
	// fails, as a failed placement is what sends bf-p4c back to the PHV allocation.
	Placement []PlacementRound
	// Binary is the assembler's output (OutDir/asm/<target>.bin) when CompileOptions.Assembler
	// is set and it assembled the program; AssemblerOutput its stdout and stderr.
	Binary, AssemblerOutput string
}

// PlacementRound is one round of bf-p4c's table placement as table_summary.log reports it
// (mau/table_summary.cpp): the backtracking state it ran in (INITIAL, then NOCC_TRY1, REDO_PHV1,
// ... when the stages do not suffice), the stages its tables took (a failed round stops where
// placement failed, with tables left over), by gress (0 ingress, 1 egress), the tables it
// placed, and the critical path: the longest chain of the table dependency graph, in stages,
// which no placement in one pass can beat.
type PlacementRound struct {
	State        string
	Stages       int
	GressStages  [2]int
	Tables       int
	CriticalPath int
}

// Unallocated is what bf-p4c's PHV allocation left over when it failed ("PHV allocation was not
// successful ... The following fields were not allocated"): the field slices and their bits.
type Unallocated struct {
	Slices, Bits int
}

// ClusterUse is one of bf-p4c's super clusters: the bits of its field slices, its fields, its
// slice lists, and the headers among its fields (sorted). ClusterDemand estimates it. Widest is
// the most fields of one rotational cluster among all the gress's super clusters (not only
// this one): the fields bf-p4c must place in one MAU group (ClusterWidth estimates it).
type ClusterUse struct {
	Bits, Fields, SliceLists int
	Headers                  []string
	Widest                   int
}

// PHVUse is bf-p4c's PHV allocation (phv.json, bf-p4c's compiler_interfaces/schemas/phv_schema.py),
// by gress: index 0 the ingress, 1 the egress (Tofino 2's ghost thread is left out).
type PHVUse struct {
	// Containers and ContainerBits count the containers the stages reach (normal, and on
	// Tofino 2 mocha and dark) that hold a field; TagalongBits the tagalong containers' bits
	// (Tofino 1: fields only the parser and deparser touch).
	Containers, ContainerBits, TagalongBits [2]int
	// FieldBits is the declared width of every field the compiler allocated (wholly or in part),
	// each counted once: the quantity GressPHV estimates.
	FieldBits [2]int
	// SliceBits is the bits of the field slices in containers: a container bit two overlaid
	// fields share counts twice, so SliceBits - FieldBits is about what overlay re-used.
	SliceBits [2]int
	// Fields counts the allocated fields.
	Fields [2]int
}

// StageUse is one MAU stage's units in use.
type StageUse struct {
	Stage                                                      int
	SRAMs, TCAMs, MeterALUs, HashBits, HashDist, LogicalTables int
}

// ErrCompile is wrapped by Compile's error when the compiler refused the program (exit status
// not zero); the error's text ends with the compiler's diagnostics.
var ErrCompile = errors.New("tofino: the compiler refused the program")

// Compile runs p4c-barefoot on prog as the project's tests and documents do:
//
//	p4c-barefoot --target T --arch A -D__TARGET_TOFINO__=N -o OUT -g --bf-rt-schema OUT/bfrt.json
//	  --p4runtime-files OUT/p4info.txtpb prog.p4
//
// and reads OUT/pipe/logs/table_summary.log, resources.json and phv.json.
func Compile(ctx context.Context, prog string, opt CompileOptions) (*Report, error) {
	rs, err := CompilePipelines(ctx, prog, opt)
	if len(rs) == 0 {
		return nil, err
	}
	if len(rs) > 1 && err == nil {
		err = fmt.Errorf("tofino: %s has %d Pipelines: CompilePipelines reports each", prog, len(rs))
	}
	return rs[0], err
}

// CompilePipelines runs the compiler as Compile does, on a program of one Pipeline or several
// (Switch(pipe_a, pipe_b): bf-p4c writes each one's output in a directory named after it), and
// returns a Report for each, in the order of their directories' names, each read from its own
// directory (OutDir/NAME/logs, assembled into OutDir/asm/NAME when it is not the only one).
// Output, Elapsed and, when the compiler refused the program for its PHV, Unallocated (the
// compiler's message does not say the pipe) are the run's, in every Report. On an error the
// Reports hold what the compiler wrote before it stopped.
func CompilePipelines(ctx context.Context, prog string, opt CompileOptions) ([]*Report, error) {
	if opt.Timeout == 0 {
		opt.Timeout = 30 * time.Minute
	}
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("tofino: %w", err)
	}
	gen := "1"
	if opt.Target == "tofino2" {
		gen = "2"
	}
	// --verbose: without it the backend writes no table_summary.log (mau/table_summary.cpp writes
	// it only when verbose), which the report reads.
	// -Tmake_clusters:1: the clustering results (the super clusters) in phv_allocation_0.log.
	// -Ttable_summary:1: each table placement round's stages and critical path, and the
	// placement, in table_summary.log (without it the file stays empty).
	args := []string{"--verbose", "-Tmake_clusters:1,table_summary:1", "--target", opt.Target, "--arch", opt.Arch, "-D__TARGET_TOFINO__=" + gen,
		"-o", opt.OutDir, "-g", "--bf-rt-schema", filepath.Join(opt.OutDir, "bfrt.json"),
		"--p4runtime-files", filepath.Join(opt.OutDir, "p4info.txtpb")}
	names := make([]string, 0, len(opt.Defines))
	for n := range opt.Defines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		args = append(args, "-D"+n+"="+opt.Defines[n])
	}
	for _, d := range opt.IncludeDirs {
		args = append(args, "-I", d)
	}
	args = append(args, opt.Flags...)
	args = append(args, prog)
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, opt.Compiler, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	pipes, perr := pipeDirs(opt.OutDir)
	if perr != nil {
		return nil, perr
	}
	if len(pipes) == 0 {
		pipes = []string{""} // the compiler stopped before it wrote a pipe's output: the run's report
	}
	var rs []*Report
	for _, name := range pipes {
		r := &Report{Pipeline: name, Output: out.String(), Elapsed: elapsed}
		logs := filepath.Join(opt.OutDir, name, "logs")
		if data, rerr := os.ReadFile(filepath.Join(logs, "phv_allocation_0.log")); rerr == nil {
			r.SuperCluster = readClusters(data)
		}
		if data, rerr := os.ReadFile(filepath.Join(logs, "table_summary.log")); rerr == nil {
			r.Placement = readPlacement(data)
		}
		rs = append(rs, r)
	}
	if ctx.Err() != nil {
		return rs, fmt.Errorf("tofino: %s %s did not finish within %v: %w", opt.Compiler, strings.Join(args, " "),
			opt.Timeout, ctx.Err())
	}
	if err != nil {
		for _, r := range rs {
			r.Unallocated = readUnallocated(r.Output)
			if r.Unallocated[0].Slices+r.Unallocated[1].Slices > 0 {
				// bf-p4c writes phv.json with what it did allocate: how full the pipe got.
				_ = r.readPHV(filepath.Join(opt.OutDir, r.Pipeline, "logs"))
			}
		}
		return rs, fmt.Errorf("%w: %s %s: %v\n%s", ErrCompile, opt.Compiler, strings.Join(args, " "), err, out.String())
	}
	if rs[0].Pipeline == "" {
		return rs, fmt.Errorf("tofino: the compiler wrote no pipe's output in %s", opt.OutDir)
	}
	for _, r := range rs {
		if err := r.read(filepath.Join(opt.OutDir, r.Pipeline, "logs")); err != nil {
			return rs, fmt.Errorf("pipeline %s: %w", r.Pipeline, err)
		}
	}
	if opt.Assembler != "" {
		for _, r := range rs {
			asm := filepath.Join(opt.OutDir, "asm")
			if len(rs) > 1 {
				asm = filepath.Join(asm, r.Pipeline)
			}
			if err := r.assemble(ctx, opt, filepath.Join(opt.OutDir, r.Pipeline), asm); err != nil {
				return rs, err
			}
		}
	}
	return rs, nil
}

// pipeDirs lists the directories of out that hold a pipe's output (a logs directory), sorted.
func pipeDirs(out string) ([]string, error) {
	ents, err := os.ReadDir(out)
	if err != nil {
		return nil, fmt.Errorf("tofino: %w", err)
	}
	var dirs []string
	for _, e := range ents {
		if st, err := os.Stat(filepath.Join(out, e.Name(), "logs")); e.IsDir() && err == nil && st.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// ErrAssemble is wrapped by Compile's error when the assembler refused the compiler's output.
var ErrAssemble = errors.New("tofino: the assembler refused the compiler's output")

// ErrParserMatch is wrapped by Compile's error when the assembler found parser states that can
// never match (bfas: "Can't match parser state due to previous match"): the binary's parser
// takes the first transition of every select. bf-p4c at p4c 34b86e9 drops the select keys of
// every parser state that saves packet data in an ordinary match register
// (MatcherAllocator::bind_use in parde/allocate_parser_match_register.cpp; p4lang/p4c#5752,
// fixed by #5753): every binary it makes parses wrong, whatever the program. The report is
// still filled in, and Report.Binary names the binary, which must not be loaded.
var ErrParserMatch = errors.New("tofino: the compiled parser cannot match its states (bf-p4c dropped its select keys: p4lang/p4c#5752)")

// assemble runs opt.Assembler on the compiler's assembly of one pipe (pipe/*.bfa) into dir.
func (r *Report) assemble(ctx context.Context, opt CompileOptions, pipe, dir string) error {
	bfa, err := filepath.Glob(filepath.Join(pipe, "*.bfa"))
	if err != nil || len(bfa) != 1 {
		return fmt.Errorf("tofino: the compiler's assembly in %s: %d files (%v)", pipe, len(bfa), err)
	}
	// bfas writes its logs under its output directory and does not create it.
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return fmt.Errorf("tofino: %w", err)
	}
	cmd := exec.CommandContext(ctx, opt.Assembler, "-o", dir, "-g", bfa[0])
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	r.AssemblerOutput = out.String()
	if err != nil {
		return fmt.Errorf("%w: %s -o %s -g %s: %v\n%s", ErrAssemble, opt.Assembler, dir, bfa[0], err, firstErrors(r.AssemblerOutput))
	}
	bin := filepath.Join(dir, opt.Target+".bin")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%w: no %s: %v", ErrAssemble, bin, err)
	}
	r.Binary = bin
	if n := strings.Count(r.AssemblerOutput, parserMatchWarning); n > 0 {
		return fmt.Errorf("%w: %d parser states (%s)", ErrParserMatch, n, bin)
	}
	return nil
}

// parserMatchWarning is bfas's warning for a parser state that an earlier one always shadows
// (bf-asm/parser-tofino-jbay.cpp, Parser::State::Match::pass1).
const parserMatchWarning = "Can't match parser state due to previous match"

// firstErrors is the assembler's error lines (its warnings run to hundreds), or its last lines.
func firstErrors(out string) string {
	var errs []string
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if strings.Contains(l, "error") || strings.Contains(l, "Compiler Bug") {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		errs = lines[max(0, len(lines)-5):]
	}
	return strings.Join(errs, "\n")
}

var (
	clusterStart = []byte("--- CLUSTERING RESULTS ---")
	clusterEnd   = []byte("--- CLUSTERING RESULTS END")
	superLine    = regexp.MustCompile(`^\s*SUPERCLUSTER Uid: \d+`)
	// A field slice as bf-p4c prints one: gress::name<width> constraints [hi:lo] (a constraint
	// such as ^bit[0..159] has no colon).
	sliceRE = regexp.MustCompile(`(ingress|egress)::(\S+?)<\d+>.*?\[(\d+):(\d+)\]`)
)

// readClusters finds the largest super cluster of each gress in the first clustering results
// of a phv_allocation_0.log (bf-p4c's Clustering prints each super cluster: its slice lists,
// then its rotational clusters, which hold every field slice once).
func readClusters(log []byte) [2]ClusterUse {
	var best [2]ClusterUse
	i := bytes.Index(log, clusterStart)
	if i < 0 {
		return best
	}
	log = log[i:]
	if j := bytes.Index(log, clusterEnd); j >= 0 {
		log = log[:j]
	}
	var cur *ClusterUse
	var widest [2]int
	g, section := -1, ""
	fields, headers := map[string]bool{}, map[string]bool{}
	done := func() {
		if cur != nil && g >= 0 && cur.Bits > best[g].Bits {
			cur.Fields = len(fields)
			for h := range headers {
				cur.Headers = append(cur.Headers, h)
			}
			sort.Strings(cur.Headers)
			best[g] = *cur
		}
	}
	for _, line := range strings.Split(string(log), "\n") {
		if superLine.MatchString(line) {
			done()
			cur, g, section = &ClusterUse{}, -1, ""
			fields, headers = map[string]bool{}, map[string]bool{}
			continue
		}
		if cur == nil {
			continue
		}
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "slice lists:"):
			section = "lists"
		case strings.HasPrefix(t, "rotational clusters:"):
			section = "clusters"
		case section == "lists" && strings.HasPrefix(t, "["):
			cur.SliceLists++
		case section == "clusters":
			rot := map[string]bool{} // a line is one rotational cluster
			for _, m := range sliceRE.FindAllStringSubmatch(t, -1) {
				g = gressIndex(m[1])
				rot[m[2]] = true
				hi, _ := strconv.Atoi(m[3])
				lo, _ := strconv.Atoi(m[4])
				if lo > hi {
					hi, lo = lo, hi
				}
				cur.Bits += hi - lo + 1
				fields[m[2]] = true
				// A header's field carries its position in the header (^bit[...]); its
				// header is its name between the parameter and the field.
				if first, last := strings.IndexByte(m[2], '.'), strings.LastIndexByte(m[2], '.'); strings.Contains(m[0], "^bit[") && first < last {
					headers[m[2][first+1:last]] = true
				}
			}
			if g >= 0 && len(rot) > widest[g] {
				widest[g] = len(rot)
			}
		}
	}
	done()
	for g := range best {
		best[g].Widest = widest[g]
	}
	return best
}

// unallocatedRE is one line of bf-p4c's list of fields it did not allocate: a whole field
// ("ingress::binc_0<1b>") or a slice of one ("ingress::seq_0<64b>[14:0]").
var unallocatedRE = regexp.MustCompile(`^\s+(ingress|egress)::\S+?<(\d+)b>(?:\[(\d+):(\d+)\])?\s*$`)

// readUnallocated totals the fields bf-p4c lists after "The following fields were not
// allocated:" (its message when a program's fields do not fit the PHV), by gress.
func readUnallocated(out string) [2]Unallocated {
	var u [2]Unallocated
	_, list, ok := strings.Cut(out, "The following fields were not allocated:")
	if !ok {
		return u
	}
	for i, line := range strings.Split(list, "\n") {
		if i == 0 {
			continue // the rest of the heading's line
		}
		m := unallocatedRE.FindStringSubmatch(line)
		if m == nil {
			break
		}
		g := gressIndex(m[1])
		bits, _ := strconv.Atoi(m[2])
		if m[3] != "" {
			hi, _ := strconv.Atoi(m[3])
			lo, _ := strconv.Atoi(m[4])
			bits = max(hi, lo) - min(hi, lo) + 1
		}
		u[g].Slices++
		u[g].Bits += bits
	}
	return u
}

var (
	stagesLine   = regexp.MustCompile(`Number of stages in table allocation: (\d+)`)
	roundLine    = regexp.MustCompile(`(?m)^Table allocation done \d+ time\(s\), state = (\S+)`)
	gressStages  = regexp.MustCompile(`Number of stages for (ingress|egress) table allocation: (\d+)`)
	criticalLine = regexp.MustCompile(`Critical path length through the table dependency graph: (\d+)`)
	tablesLine   = regexp.MustCompile(`Number of tables allocated: (\d+)`)
)

// readPlacement reads the rounds of table placement a table_summary.log reports, each starting
// at its "Table allocation done N time(s), state = S" line.
func readPlacement(log []byte) []PlacementRound {
	var rounds []PlacementRound
	starts := roundLine.FindAllSubmatchIndex(log, -1)
	for i, st := range starts {
		end := len(log)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		text := log[st[0]:end]
		r := PlacementRound{State: string(log[st[2]:st[3]])}
		num := func(re *regexp.Regexp) int {
			if m := re.FindSubmatch(text); m != nil {
				n, _ := strconv.Atoi(string(m[1]))
				return n
			}
			return 0
		}
		r.Stages, r.CriticalPath, r.Tables = num(stagesLine), num(criticalLine), num(tablesLine)
		for _, m := range gressStages.FindAllSubmatch(text, -1) {
			r.GressStages[gressIndex(string(m[1]))], _ = strconv.Atoi(string(m[2]))
		}
		rounds = append(rounds, r)
	}
	return rounds
}

// read fills the report from the compiler's logs directory.
func (r *Report) read(logs string) error {
	rj, err := os.ReadFile(filepath.Join(logs, "resources.json"))
	if err != nil {
		return fmt.Errorf("tofino: the compiler's report: %w", err)
	}
	if err := r.readResources(rj); err != nil {
		return fmt.Errorf("tofino: %s: %w", filepath.Join(logs, "resources.json"), err)
	}
	// The stage count: the last placement round's in table_summary.log (written with
	// -Ttable_summary:1; p4c-barefoot 9.13.4 leaves the file empty without it), else the last
	// MAU stage resources.json lists with a logical table, plus one.
	ts, err := os.ReadFile(filepath.Join(logs, "table_summary.log"))
	if err == nil {
		r.Placement = readPlacement(ts)
	}
	if n := len(r.Placement); n > 0 && r.Placement[n-1].Stages > 0 {
		r.Stages = r.Placement[n-1].Stages // the last round's: the placement kept
		return r.readPHV(logs)
	}
	for _, u := range r.PerStage {
		if u.LogicalTables > 0 {
			r.Stages = max(r.Stages, u.Stage+1)
		}
	}
	return r.readPHV(logs)
}

// phvJSON is the part of phv.json the report reads.
type phvJSON struct {
	Containers []struct {
		BitWidth      int    `json:"bit_width"`
		ContainerType string `json:"container_type"`
		Gress         string `json:"gress"`
		Slices        []struct {
			SliceInfo struct{ LSB, MSB int } `json:"slice_info"`
		} `json:"slices"`
	} `json:"containers"`
	Fields []struct {
		FieldInfo struct {
			BitWidth int    `json:"bit_width"`
			Gress    string `json:"gress"`
		} `json:"field_info"`
		Status string `json:"status"`
	} `json:"fields"`
}

// readPHV reads the PHV allocation from phv.json, when the compiler wrote one.
func (r *Report) readPHV(logs string) error {
	data, err := os.ReadFile(filepath.Join(logs, "phv.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tofino: %w", err)
	}
	u, err := readPHVJSON(data)
	if err != nil {
		return fmt.Errorf("tofino: %s: %w", filepath.Join(logs, "phv.json"), err)
	}
	r.PHVUse = u
	return nil
}

func gressIndex(g string) int {
	switch g {
	case "ingress":
		return 0
	case "egress":
		return 1
	}
	return -1
}

// readPHVJSON totals phv.json's containers and fields by gress.
func readPHVJSON(data []byte) (PHVUse, error) {
	var pj phvJSON
	var u PHVUse
	if err := json.Unmarshal(data, &pj); err != nil {
		return u, err
	}
	for _, c := range pj.Containers {
		g := gressIndex(c.Gress)
		if g < 0 || len(c.Slices) == 0 {
			continue
		}
		if c.ContainerType == "tagalong" {
			u.TagalongBits[g] += c.BitWidth
		} else {
			u.Containers[g]++
			u.ContainerBits[g] += c.BitWidth
		}
		for _, sl := range c.Slices {
			if sl.SliceInfo.MSB < sl.SliceInfo.LSB {
				return u, fmt.Errorf("a slice [%d:%d]", sl.SliceInfo.MSB, sl.SliceInfo.LSB)
			}
			u.SliceBits[g] += sl.SliceInfo.MSB - sl.SliceInfo.LSB + 1
		}
	}
	for _, f := range pj.Fields {
		g := gressIndex(f.FieldInfo.Gress)
		if g < 0 || (f.Status != "allocated" && f.Status != "partially allocated") {
			continue
		}
		u.Fields[g]++
		u.FieldBits[g] += f.FieldInfo.BitWidth
	}
	return u, nil
}

// resourcesJSON is the part of resources.json (bf-p4c's resources_schema) the report reads.
type resourcesJSON struct {
	CompilerVersion string `json:"compiler_version"`
	Resources       struct {
		MAU struct {
			NStages   int `json:"nStages"`
			MauStages []struct {
				StageNumber int                                `json:"stage_number"`
				Rams        struct{ Srams []json.RawMessage }  `json:"rams"`
				Tcams       struct{ Tcams []json.RawMessage }  `json:"tcams"`
				MeterAlus   struct{ Meters []json.RawMessage } `json:"meter_alus"`
				HashBits    struct{ Bits []json.RawMessage }   `json:"hash_bits"`
				HashDist    struct{ Units []json.RawMessage }  `json:"hash_distribution_units"`
				Logical     struct{ IDs []json.RawMessage }    `json:"logical_tables"`
				Vliw        struct {
					Instructions []json.RawMessage `json:"instructions"`
				} `json:"vliw"`
			} `json:"mau_stages"`
		} `json:"mau"`
	} `json:"resources"`
}

// readResources totals the MAU stages of resources.json.
func (r *Report) readResources(data []byte) error {
	var rj resourcesJSON
	if err := json.Unmarshal(data, &rj); err != nil {
		return err
	}
	r.CompilerVersion = rj.CompilerVersion
	r.AvailableStages = rj.Resources.MAU.NStages
	for _, st := range rj.Resources.MAU.MauStages {
		u := StageUse{Stage: st.StageNumber, SRAMs: len(st.Rams.Srams), TCAMs: len(st.Tcams.Tcams),
			MeterALUs: len(st.MeterAlus.Meters), HashBits: len(st.HashBits.Bits), HashDist: len(st.HashDist.Units),
			LogicalTables: len(st.Logical.IDs)}
		r.PerStage = append(r.PerStage, u)
		r.SRAMs += u.SRAMs
		r.TCAMs += u.TCAMs
		r.MeterALUs += u.MeterALUs
		r.HashBits += u.HashBits
		r.HashDist += u.HashDist
		r.LogicalTables += u.LogicalTables
		r.VLIW += len(st.Vliw.Instructions)
	}
	if r.AvailableStages == 0 {
		return errors.New("no resources.mau.nStages")
	}
	return nil
}
