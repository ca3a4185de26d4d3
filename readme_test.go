package retry_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMESnippetsCompile type-checks every Go snippet of the README
// against the library as it is: a renamed function or a changed signature
// breaks this test, not a reader's first try. Each snippet becomes the body
// of a function (or, when it declares functions or types, a file-level
// block) after testdata/readme/prelude.go, which declares the placeholders
// the snippets use (ctx, op, client…). Only "declared and not used" errors
// are forgiven: a snippet shows a step, not a whole program.
func TestREADMESnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the README against the sources: slow")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	prelude, err := os.ReadFile("testdata/readme/prelude.go")
	if err != nil {
		t.Fatal(err)
	}
	snippets := rootSnippets(t, goSnippets(string(readme)))
	if len(snippets) < 10 {
		t.Fatalf("found %d Go snippets in the README; the extraction is broken", len(snippets))
	}
	src, lines := assemble(string(prelude), snippets)
	for _, e := range typeCheck(t, src) {
		t.Errorf("README line %d: %s", lines.readmeLine(e.line), e.msg)
	}
}

// TestREADMESnippetsDoNotDiscardErrors checks that no snippet drops an error
// on the floor with `_ =` or `x, _ :=` of a call that returns one: the README
// is copied, and a discarded error there becomes one in production.
func TestREADMESnippetsDoNotDiscardErrors(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blank := regexp.MustCompile(`(^|\s)(_\s*(,\s*_\s*)?=|[A-Za-z_][A-Za-z0-9_]*(\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*\s*,\s*_\s*:?=)\s`)
	for _, s := range goSnippets(string(readme)) {
		for i, line := range strings.Split(s.code, "\n") {
			if blank.MatchString(line) && !strings.Contains(line, "// not an error") {
				t.Errorf("README line %d discards a value: %s", s.line+i, strings.TrimSpace(line))
			}
		}
	}
}

type snippet struct {
	line int // the README line of the snippet's first line of code
	code string
	// elsewhere names the file of a nested module that compiles the
	// snippet (an HTML comment "<!-- compiled in path -->" just before the
	// fence): the root module cannot import the nested modules.
	elsewhere string
}

// compiledIn is the marker of a snippet that a nested module compiles.
var compiledIn = regexp.MustCompile(`^<!-- compiled in (\S+) -->$`)

// goSnippets returns the README's ```go blocks.
func goSnippets(readme string) []snippet {
	var out []snippet
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		var elsewhere string
		if i > 0 {
			if m := compiledIn.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				elsewhere = m[1]
			}
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		out = append(out, snippet{line: start + 1, code: strings.Join(lines[start:i], "\n"), elsewhere: elsewhere})
	}
	return out
}

// rootSnippets returns the snippets the root module compiles, and checks
// that each of the others appears, line for line, in the file that says it
// compiles it: a snippet cannot drift from the code that checks it.
func rootSnippets(t *testing.T, all []snippet) []snippet {
	t.Helper()
	var out []snippet
	for _, s := range all {
		if s.elsewhere == "" {
			out = append(out, s)
			continue
		}
		src, err := os.ReadFile(s.elsewhere)
		if err != nil {
			t.Errorf("README line %d: the snippet says it is compiled in %s: %v", s.line, s.elsewhere, err)
			continue
		}
		if !containsLines(string(src), s.code) {
			t.Errorf("README line %d: the snippet is not, line for line, in %s, which should compile it", s.line, s.elsewhere)
		}
	}
	return out
}

// containsLines reports whether the non-blank lines of snippet appear in
// src consecutively (blank lines and indentation aside).
func containsLines(src, snippet string) bool {
	want := nonBlank(snippet)
	have := nonBlank(src)
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

// lineMap maps a line of the assembled file back to the README.
type lineMap []struct{ file, readme, n int }

func (m lineMap) readmeLine(fileLine int) int {
	for _, r := range m {
		if fileLine >= r.file && fileLine < r.file+r.n {
			return r.readme + fileLine - r.file
		}
	}
	return 0
}

// assemble puts the snippets after the prelude: declarations at file level,
// statements in a function of their own that may return an error.
func assemble(prelude string, snippets []snippet) (string, lineMap) {
	var b strings.Builder
	b.WriteString(prelude)
	line := strings.Count(prelude, "\n") + 1
	var m lineMap
	for i, s := range snippets {
		n := strings.Count(s.code, "\n") + 1
		if declares(s.code) {
			b.WriteString("\n")
			line++
			m = append(m, struct{ file, readme, n int }{line, s.line, n})
			b.WriteString(s.code + "\n")
			line += n
			continue
		}
		fmt.Fprintf(&b, "\nfunc snippet%d() error {\n", i)
		line += 2
		m = append(m, struct{ file, readme, n int }{line, s.line, n})
		b.WriteString(s.code + "\n\treturn nil\n}\n")
		line += n + 2
	}
	return b.String(), m
}

func declares(code string) bool {
	for _, l := range strings.Split(code, "\n") {
		if strings.HasPrefix(l, "func ") || strings.HasPrefix(l, "type ") {
			return true
		}
	}
	return false
}

type checkError struct {
	line int
	msg  string
}

// typeCheck returns the errors of src that are not "declared and not used"
// (soft errors of unused variables and imports are forgiven).
func typeCheck(t *testing.T, src string) []checkError {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "readme.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("the README's snippets do not parse: %v", err)
	}
	var errs []checkError
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "source", nil),
		Error: func(err error) {
			if e, ok := err.(types.Error); ok && !(e.Soft && unused(e.Msg)) {
				errs = append(errs, checkError{fset.Position(e.Pos).Line, e.Msg})
			}
		},
	}
	_, _ = conf.Check("readme", fset, []*ast.File{f}, nil)
	return errs
}

func unused(msg string) bool {
	return strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used")
}
