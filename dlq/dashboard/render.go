package dashboard

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"time"
)

//go:embed templates/*.html templates/style.css
var files embed.FS

// pages are the templates, each the layout with one page's content,
// parsed once.
var pages = func() map[string]*template.Template {
	funcs := template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		},
	}
	out := map[string]*template.Template{}
	for _, name := range []string{"overview", "group", "letter", "confirm", "report", "error"} {
		out[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}()

var style = func() []byte {
	b, err := files.ReadFile("templates/style.css")
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return b
}()

// render executes a page into a buffer first, so that a template's error
// is a 500, not half a page.
func (d *Dashboard) render(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := pages[name].Execute(&b, data); err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func (d *Dashboard) style(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Write(style)
}
