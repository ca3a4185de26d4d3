package retry_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The library's exported surface is bounded: every identifier is one more
// thing a user may have to learn, and one more we must keep. Counted are the
// exported functions, types, variables and constants of the library
// packages — the root module's and the nested modules', not the examples,
// the benchmarks, the command or the internal packages — and the exported
// methods of their exported types, in non-test files.
const (
	maxRootIdentifiers    = 60
	maxLibraryIdentifiers = 650
)

func TestTheExportedSurfaceIsBounded(t *testing.T) {
	counts := exportedIdentifiers(t, ".")
	total := 0
	var lines []string
	for dir, n := range counts {
		total += n
		lines = append(lines, fmt.Sprintf("%4d %s", n, dir))
	}
	sort.Strings(lines)
	assert.LessOrEqual(t, counts["."], maxRootIdentifiers, "the root package")
	assert.LessOrEqual(t, total, maxLibraryIdentifiers, "all library packages:\n%s", strings.Join(lines, "\n"))
}

// exportedIdentifiers counts the exported identifiers of every library
// package under root, by directory.
func exportedIdentifiers(t *testing.T, root string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "examples", "bench", "cmd", "internal", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		require.NoError(t, err)
		if f.Name.Name == "main" {
			return nil
		}
		counts[filepath.Dir(path)] += countExported(f)
		return nil
	})
	require.NoError(t, err)
	return counts
}

func countExported(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || receiverExported(d.Recv.List[0].Type)) {
				n++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

func receiverExported(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
