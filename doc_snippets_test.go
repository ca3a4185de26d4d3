package retry_test

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docPackages are the packages of this module whose doc.go holds Go
// snippets: what the README points to for everything deeper. (Package dlq's
// sketches name placeholders of their own: a queue's message with Ack and
// Nack.)
var docPackages = []string{".", "classify", "breaker", "limit", "hedge", "httpretry"}

// TestDocSnippetsCompile type-checks the Go snippets of the package docs
// against the library as it is: each package's snippets become the bodies
// of functions (or, when they declare functions or types, file-level
// blocks) after testdata/docs/prelude.go, which declares the placeholders
// they use (ctx, op, client…). A snippet shows a step, not a whole program,
// so only "declared and not used" is forgiven. A code block that does not
// parse as Go (a table, a formula, a command) is not a snippet.
func TestDocSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package docs against the sources: slow")
	}
	prelude, err := os.ReadFile("testdata/docs/prelude.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	imp := exportImporter(t, fset, importsOf(string(prelude)))
	total := 0
	for _, pkg := range docPackages {
		snippets := docSnippets(t, pkg)
		total += len(snippets)
		src, lines := assemble(string(prelude), snippets)
		for _, e := range typeCheckFragment(t, fset, imp, src) {
			t.Errorf("%s: line %s: %s", filepath.Join(pkg, "doc.go"), lines.snippetLine(e.line), e.msg)
		}
	}
	if total < 24 {
		t.Fatalf("found %d Go snippets in the package docs; the extraction is broken", total)
	}
}

// TestDocSnippetsReadEveryErr: the rule of the README's snippets, for the
// package docs' (the err of a fragment may be read by the code after it, so
// each fragment is checked as the body of a function that returns err).
func TestDocSnippetsReadEveryErr(t *testing.T) {
	for _, pkg := range docPackages {
		for _, s := range docSnippets(t, pkg) {
			code := "package p\n\n" + s.code + "\n"
			if !declares(s.code) {
				code = "package p\n\nfunc f() error {\n" + s.code + "\n}\n"
			}
			for _, line := range unreadErrs(code) {
				t.Errorf("%s: snippet %q…: err is assigned and never read (line %d of the snippet)",
					filepath.Join(pkg, "doc.go"), firstLine(s.code), line-strings.Count(code[:strings.Index(code, s.code)], "\n"))
			}
		}
	}
}

type docSnippet struct {
	code string
}

// docSnippets returns the code blocks of pkg's doc.go comment that parse
// as Go statements or declarations.
func docSnippets(t *testing.T, pkg string) []docSnippet {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(pkg, "doc.go"), nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		return nil
	}
	var p comment.Parser
	var out []docSnippet
	for _, b := range p.Parse(f.Doc.Text()).Content {
		c, ok := b.(*comment.Code)
		if !ok || !isGo(c.Text) {
			continue
		}
		out = append(out, docSnippet{strings.TrimRight(c.Text, "\n")})
	}
	return out
}

// isGo reports whether code parses as declarations or as statements.
func isGo(code string) bool {
	if strings.HasPrefix(strings.TrimSpace(code), "|") {
		return false
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+code, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc f() {\n"+code+"\n}", 0)
	return err == nil
}

func firstLine(code string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(code), "\n")
	return l
}

// lineMap maps a line of the assembled file back to a line of its snippet.
type lineMap []struct{ file, n int }

func (m lineMap) snippetLine(fileLine int) string {
	for i, r := range m {
		if fileLine >= r.file && fileLine < r.file+r.n {
			return fmt.Sprintf("%d of snippet %d", fileLine-r.file+1, i+1)
		}
	}
	return fmt.Sprintf("%d of the prelude", fileLine)
}

// assemble puts the snippets after the prelude: declarations at file level,
// statements in a function of their own that may return an error.
func assemble(prelude string, snippets []docSnippet) (string, lineMap) {
	var b strings.Builder
	b.WriteString(prelude)
	line := strings.Count(prelude, "\n") + 1
	var m lineMap
	for i, s := range snippets {
		n := strings.Count(s.code, "\n") + 1
		if declares(s.code) {
			b.WriteString("\n")
			line++
			m = append(m, struct{ file, n int }{line, n})
			b.WriteString(s.code + "\n")
			line += n
			continue
		}
		fmt.Fprintf(&b, "\nfunc snippet%d() error {\n", i)
		line += 2
		m = append(m, struct{ file, n int }{line, n})
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

// typeCheckFragment returns the errors of src that are not "declared and
// not used".
func typeCheckFragment(t *testing.T, fset *token.FileSet, imp types.Importer, src string) []checkError {
	t.Helper()
	f, err := parser.ParseFile(fset, "docs.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("the docs' snippets do not parse together: %v", err)
	}
	var errs []checkError
	conf := types.Config{
		Importer: imp,
		Error: func(err error) {
			if e, ok := err.(types.Error); ok && !(e.Soft && unused(e.Msg)) {
				errs = append(errs, checkError{fset.Position(e.Pos).Line, e.Msg})
			}
		},
	}
	_, _ = conf.Check("docs", fset, []*ast.File{f}, nil) // not an error: each is reported above
	return errs
}

func unused(msg string) bool {
	return strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used")
}
