package retry_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's Go snippets are whole programs: a reader pastes one into
// main.go and runs it. These tests hold them to that. A snippet that
// imports only the standard library and this module is type-checked here,
// as it is, as a package of its own; one that imports a nested module
// (which the root module cannot import) must be, byte for byte, the file
// <nested module>/internal/readme/main.go, which that module's own build and
// vet compile.

// nestedModules are the module paths whose snippets live in their own
// module; the snippet's file is <dir>/internal/readme/main.go.
var nestedModules = map[string]string{
	"github.com/retrykit/retry/grpcretry": "grpcretry",
	"github.com/retrykit/retry/sqlretry":  "sqlretry",
	"github.com/retrykit/retry/otelretry": "otelretry",
}

func TestREADMESnippetsAreWholePrograms(t *testing.T) {
	for _, s := range readmeSnippets(t) {
		f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", s.code, parser.ImportsOnly)
		if err != nil {
			t.Errorf("README line %d: not a whole Go file: %v", s.line, err)
			continue
		}
		if f.Name.Name != "main" || !strings.Contains(s.code, "\nfunc main() {") {
			t.Errorf("README line %d: a snippet is a whole program: package main, its imports, func main", s.line)
		}
	}
}

func TestREADMESnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the README against the sources: slow")
	}
	fset := token.NewFileSet()
	var imports []string
	for _, s := range readmeSnippets(t) {
		imports = append(imports, importsOf(s.code)...)
	}
	imp := exportImporter(t, fset, imports)
	checked := 0
	for _, s := range readmeSnippets(t) {
		if dir := nestedDir(s.code); dir != "" {
			want := filepath.Join(dir, "internal", "readme", "main.go")
			src, err := os.ReadFile(want)
			if err != nil || string(src) != s.code {
				t.Errorf("README line %d: the snippet imports a nested module, and must be %s as it is (%v)", s.line, want, err)
			}
			continue
		}
		checked++
		for _, e := range typeCheck(fset, imp, s.code) {
			t.Errorf("README line %d: %s", s.line+e.line-1, e.msg)
		}
	}
	if checked < 3 {
		t.Fatalf("type-checked %d snippets of the README; the extraction is broken", checked)
	}
}

// TestREADMESnippetsReadEveryErr fails on an err that is assigned and never
// read before it is assigned again or the function ends: the compiler
// accepts it, and a reader copies it.
func TestREADMESnippetsReadEveryErr(t *testing.T) {
	for _, s := range readmeSnippets(t) {
		for _, line := range unreadErrs(s.code) {
			t.Errorf("README line %d: err is assigned and never read", s.line+line-1)
		}
	}
}

// TestREADMESnippetsDoNotDiscardErrors checks that no snippet drops an error
// on the floor with `_ =` or `x, _ :=`.
func TestREADMESnippetsDoNotDiscardErrors(t *testing.T) {
	blank := regexp.MustCompile(`(^|\s)(_\s*(,\s*_\s*)?=|[A-Za-z_][A-Za-z0-9_]*(\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*\s*,\s*_\s*:?=)\s`)
	for _, s := range readmeSnippets(t) {
		for i, line := range strings.Split(s.code, "\n") {
			if blank.MatchString(line) {
				t.Errorf("README line %d discards a value: %s", s.line+i, strings.TrimSpace(line))
			}
		}
	}
}

// TestREADMEPointsAtNothingAUserLacks: no issue numbers, and no document or
// path outside the repository.
func TestREADMEPointsAtNothingAUserLacks(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`(?i)\bissue #?\d+|design doc|source doc|\.\./shared|\.\./seeds`)
	for i, line := range strings.Split(string(readme), "\n") {
		if m := bad.FindString(line); m != "" {
			t.Errorf("README line %d mentions %q, which a user does not have", i+1, m)
		}
	}
}

func TestTheREADMEIsReadInTenMinutes(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 350 {
		t.Errorf("the README has %d lines; at most 350 (the rest belongs in the package docs)", n)
	}
}

type snippet struct {
	line int // the README line of the snippet's first line of code
	code string
}

// readmeSnippets returns the README's ```go blocks.
func readmeSnippets(t *testing.T) []snippet {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	lines := strings.Split(string(readme), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		out = append(out, snippet{line: start + 1, code: strings.Join(lines[start:i], "\n") + "\n"})
	}
	if len(out) < 7 {
		t.Fatalf("found %d Go snippets in the README; the extraction is broken", len(out))
	}
	return out
}

// importsOf returns the import paths of a Go file.
func importsOf(code string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", code, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	var out []string
	for _, spec := range f.Imports {
		out = append(out, strings.Trim(spec.Path.Value, `"`))
	}
	return out
}

// exportImporter returns an importer of compiled export data for this
// module's packages and the given ones, with their dependencies: `go list
// -export` compiles them, or finds them in the build cache. Type-checking
// the library from its sources instead takes a minute on two cores.
func exportImporter(t *testing.T, fset *token.FileSet, imports []string) types.Importer {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", "./..."}, imports...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	files := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if path, file, ok := strings.Cut(l, "="); ok && file != "" {
			files[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

// nestedDir returns the directory of the nested module the snippet
// imports, or "".
func nestedDir(code string) string {
	f, err := parser.ParseFile(token.NewFileSet(), "snippet.go", code, parser.ImportsOnly)
	if err != nil {
		return ""
	}
	for _, spec := range f.Imports {
		path := strings.Trim(spec.Path.Value, `"`)
		for mod, dir := range nestedModules {
			if path == mod || strings.HasPrefix(path, mod+"/") {
				return dir
			}
		}
	}
	return ""
}

type checkError struct {
	line int // in the snippet
	msg  string
}

// typeCheck returns every error of the snippet as a package of its own:
// unused variables and imports included, as the compiler has them.
func typeCheck(fset *token.FileSet, imp types.Importer, code string) []checkError {
	f, err := parser.ParseFile(fset, "snippet.go", code, parser.SkipObjectResolution)
	if err != nil {
		return []checkError{{1, fmt.Sprintf("does not parse: %v", err)}}
	}
	var errs []checkError
	conf := types.Config{
		Importer: imp,
		Error: func(err error) {
			if e, ok := err.(types.Error); ok {
				errs = append(errs, checkError{fset.Position(e.Pos).Line, e.Msg})
			}
		},
	}
	_, _ = conf.Check("main", fset, []*ast.File{f}, nil) // not an error: each is reported above
	return errs
}

// unreadErrs returns the lines where a variable named err is assigned a
// value that nothing reads: the next mention of that variable, in source
// order, after the assignment is complete, is another assignment, or there
// is none. Variables are told apart by the type checker's objects (imports
// need not resolve for that), so a closure's own err is not the outer one.
func unreadErrs(code string) []int {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", code, 0)
	if err != nil {
		return nil
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: unresolved{}, Error: func(error) {}}
	_, _ = conf.Check("main", fset, []*ast.File{f}, info) // not an error: imports are not resolved here
	type mention struct {
		pos   token.Pos // for an assignment, where it completes
		write bool
		line  int
	}
	byVar := map[types.Object][]mention{}
	writes := map[*ast.Ident]token.Pos{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == "err" {
					writes[id] = n.End()
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				if id.Name == "err" && len(n.Values) > 0 {
					writes[id] = n.End()
				}
			}
		}
		return true
	})
	record := func(id *ast.Ident, obj types.Object) {
		if id.Name != "err" || obj == nil {
			return
		}
		if _, ok := obj.(*types.Var); !ok {
			return
		}
		m := mention{pos: id.Pos(), line: fset.Position(id.Pos()).Line}
		if end, ok := writes[id]; ok {
			m = mention{pos: end, write: true, line: m.line}
		}
		byVar[obj] = append(byVar[obj], m)
	}
	for id, obj := range info.Defs {
		record(id, obj)
	}
	for id, obj := range info.Uses {
		record(id, obj)
	}
	var lines []int
	for _, ms := range byVar {
		slices.SortFunc(ms, func(a, b mention) int { return int(a.pos) - int(b.pos) })
		for i, m := range ms {
			if m.write && (i+1 == len(ms) || ms[i+1].write) {
				lines = append(lines, m.line)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// unresolved is an importer that resolves nothing: unreadErrs needs only the
// snippet's own variables.
type unresolved struct{}

func (unresolved) Import(path string) (*types.Package, error) {
	return nil, fmt.Errorf("not resolved: %s", path)
}

// TestUnreadErrsFindsADroppedErr checks the checker itself on the mistakes
// it is for, and on the forms it must accept.
func TestUnreadErrsFindsADroppedErr(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []int
	}{
		{"an err never read", "x, err := f()\n\tuse(x)", []int{4}},
		{"an err overwritten before it is read", "err := g()\n\terr = g()\n\tuse(err)", []int{4}},
		{"an err read", "err := g()\n\tif err != nil {\n\t\tuse(err)\n\t}", nil},
		{"an if's own err", "if err := g(); err != nil {\n\t\tuse(err)\n\t}", nil},
		{"a closure's err inside the assignment", "err := h(func() error { err := g(); return err })\n\tuse(err)", nil},
		{"an err read in the next assignment", "err := g()\n\terr = k(err)\n\tuse(err)", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := "package main\n\nfunc main() {\n\t" + c.body + "\n}\n"
			if got := unreadErrs(code); !slices.Equal(got, c.want) {
				t.Errorf("unreadErrs = %v, want %v in\n%s", got, c.want, code)
			}
		})
	}
}

// TestNestedREADMESnippetsAreCompiled: the nested modules' READMEs hold
// the README's deeper sections; each Go snippet there says which file of
// its module compiles it (an HTML comment "<!-- compiled in file -->" just
// before the fence, the file relative to the README), and is in that file
// line for line, so that it cannot drift from the code that checks it.
func TestNestedREADMESnippetsAreCompiled(t *testing.T) {
	marker := regexp.MustCompile(`^<!-- compiled in (\S+) -->$`)
	for _, dir := range []string{"grpcretry", "sqlretry", "otelretry", "idempotency/postgres"} {
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(readme), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```go" {
				continue
			}
			start := i + 1
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			}
			where := fmt.Sprintf("%s/README.md line %d", dir, start+1)
			m := marker.FindStringSubmatch(strings.TrimSpace(lines[max(start-2, 0)]))
			if m == nil {
				t.Errorf("%s: a snippet without a <!-- compiled in file --> line before it", where)
				continue
			}
			src, err := os.ReadFile(filepath.Join(dir, m[1]))
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if !containsLines(string(src), strings.Join(lines[start:i], "\n")) {
				t.Errorf("%s: the snippet is not, line for line, in %s", where, m[1])
			}
		}
	}
}

// containsLines reports whether the non-blank lines of snippet appear in
// src consecutively (blank lines and indentation aside).
func containsLines(src, snippet string) bool {
	want, have := nonBlank(snippet), nonBlank(src)
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func nonBlank(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
