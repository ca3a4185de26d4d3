package classify_test

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrykit/retry/classify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reasonConsts returns every exported Reason… constant declared in dir's
// non-test files, by name, with its value when it is a literal.
func reasonConsts(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if strings.HasPrefix(name.Name, "Reason") && name.IsExported() && i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[name.Name] = constant.StringVal(constant.MakeFromLiteral(lit.Value, lit.Kind, 0))
					} else {
						out[name.Name] = ""
					}
				}
			}
			return true
		})
	}
	return out
}

func TestReasonsListsEveryReasonConstantOnce(t *testing.T) {
	declared := reasonConsts(t, ".")
	listed := slices.Collect(classify.Reasons())
	for name, value := range declared {
		assert.Contains(t, listed, value, "classify.%s (%q) is missing from Reasons: add it to the list in reasons.go", name, value)
	}
	seen := map[string]bool{}
	for _, r := range listed {
		assert.False(t, seen[r], "%q is listed twice", r)
		seen[r] = true
	}
	assert.Len(t, listed, len(declared), "Reasons lists exactly the Reason… constants")
}

// Every failure class of the library is defined in this package: another
// package of the module that declared a Reason… constant of its own, or put a
// string literal in a Decision's Reason, would report a class that the
// derived tables (otelretry's retry.class, among others) do not know.
func TestNoOtherPackageDefinesAReason(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "classify", "examples", "bench", "testdata", ".git":
				if path != root {
					return filepath.SkipDir
				}
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
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if strings.HasPrefix(name.Name, "Reason") && name.IsExported() && i < len(n.Values) {
						if _, isLit := n.Values[i].(*ast.BasicLit); isLit {
							t.Errorf("%s: %s is a failure class of its own: define it in package classify", path, name.Name)
						}
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Reason" {
					if lit, ok := n.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						t.Errorf("%s: a Reason %s written as a literal: define it in package classify", path, lit.Value)
					}
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
}
