package p4rt

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/front"
)

// BundleMagic starts every bundle.
const BundleMagic = "netlock-p4-bundle 1\n"

// Bundle is the device config of a pipeline: P4 source files, the first of
// which is the program's main file. Quoted #includes resolve among the
// bundle's files (relative to the including file's directory, as the
// preprocessor does); <core.p4>, <v1model.p4> and <tna.p4> come with the front end.
//
// The encoding is proto-free text with length-prefixed contents:
//
//	netlock-p4-bundle 1\n
//	file <name> <length>\n<length bytes of content>\n
//	file <name> <length>\n<length bytes of content>\n
//	...
//
// Names are slash-separated relative paths without spaces, "." or ".."
// elements. A device config that does not start with the magic line is taken
// as a single P4 source file named "main.p4", so a bare program works too.
type Bundle struct {
	Files []BundleFile
}

// BundleFile is one file of a bundle.
type BundleFile struct {
	Name string
	Data []byte
}

// Main is the name of the main file ("" for an empty bundle).
func (b *Bundle) Main() string {
	if len(b.Files) == 0 {
		return ""
	}
	return b.Files[0].Name
}

// Encode renders the bundle.
func (b *Bundle) Encode() []byte {
	var buf bytes.Buffer
	buf.WriteString(BundleMagic)
	for _, f := range b.Files {
		fmt.Fprintf(&buf, "file %s %d\n", f.Name, len(f.Data))
		buf.Write(f.Data)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// ParseBundle decodes a device config (see [Bundle]).
func ParseBundle(data []byte) (*Bundle, error) {
	if !bytes.HasPrefix(data, []byte(BundleMagic)) {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, errors.New("empty device config")
		}
		return &Bundle{Files: []BundleFile{{Name: "main.p4", Data: data}}}, nil
	}
	b := &Bundle{}
	seen := map[string]bool{}
	rest := data[len(BundleMagic):]
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, errors.New("bundle: truncated file header")
		}
		fields := strings.Fields(string(rest[:nl]))
		if len(fields) != 3 || fields[0] != "file" {
			return nil, fmt.Errorf("bundle: bad file header %q", rest[:nl])
		}
		name := fields[1]
		if !validName(name) {
			return nil, fmt.Errorf("bundle: bad file name %q", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("bundle: file %q twice", name)
		}
		seen[name] = true
		n, err := strconv.Atoi(fields[2])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bundle: bad length %q", fields[2])
		}
		rest = rest[nl+1:]
		if len(rest) < n+1 || rest[n] != '\n' {
			return nil, fmt.Errorf("bundle: file %q truncated", name)
		}
		b.Files = append(b.Files, BundleFile{Name: name, Data: rest[:n:n]})
		rest = rest[n+1:]
	}
	if len(b.Files) == 0 {
		return nil, errors.New("bundle: no files")
	}
	return b, nil
}

func validName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsAny(name, " \t\r\n\\") {
		return false
	}
	for _, el := range strings.Split(name, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

// BundleFromFS builds a bundle from the named files of fsys (main first).
func BundleFromFS(fsys fs.FS, main string, others ...string) (*Bundle, error) {
	b := &Bundle{}
	for _, name := range append([]string{main}, others...) {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		b.Files = append(b.Files, BundleFile{Name: name, Data: data})
	}
	return b, nil
}

// Compile type-checks the bundle's main program with the front end, at its default bounds.
func (b *Bundle) Compile() (*front.Checked, error) {
	return b.CompileNesting(0)
}

// CompileNesting is Compile with the front end's nesting bound (front.Options.MaxNesting; 0 is
// front.DefaultMaxNesting): a program nested deeper is refused with a "nested too deeply" error.
func (b *Bundle) CompileNesting(maxNesting int) (*front.Checked, error) {
	files := map[string][]byte{}
	for _, f := range b.Files {
		files[path.Clean(f.Name)] = f.Data
	}
	read := func(p string) ([]byte, error) {
		if d, ok := files[path.Clean(p)]; ok {
			return d, nil
		}
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return front.LoadOptions(b.Main(), front.Options{ReadFile: read, MaxNesting: maxNesting})
}
