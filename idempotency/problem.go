package idempotency

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The kinds of idempotency failure, as the middleware sends them in the
// "kind" member of its problem details (RFC 9457) and as
// classify.StatusError.Kind carries them; the package documentation lists
// them (Problem kinds). The first three are the LLM gateway's names.
const (
	kindInProgress       = "idempotency-in-progress"
	kindKeyReuse         = "idempotency-key-reuse"
	kindNotRetained      = "idempotency-response-not-retained"
	kindKeyMissing       = "idempotency-key-missing"
	kindKeyInvalid       = "idempotency-key-invalid"
	kindRequestTooLarge  = "idempotency-request-too-large"
	kindStoreUnavailable = "idempotency-store-unavailable"
	kindScopeFull        = "idempotency-scope-full"
	kindIncomplete       = "idempotency-response-incomplete"
)

// problemTypes gives each kind its problem "type": problemTypeBase and this
// anchor. The URIs are part of the protocol — clients may match them, and
// ResponseError reads a kind from one — so they never change.
var problemTypes = map[string]string{
	kindInProgress:       "KindInProgress",
	kindKeyReuse:         "KindKeyReuse",
	kindNotRetained:      "KindNotRetained",
	kindKeyMissing:       "KindKeyMissing",
	kindKeyInvalid:       "KindKeyInvalid",
	kindRequestTooLarge:  "KindRequestTooLarge",
	kindStoreUnavailable: "KindStoreUnavailable",
	kindScopeFull:        "KindScopeFull",
	kindIncomplete:       "KindResponseIncomplete",
}

const problemTypeBase = "https://pkg.go.dev/github.com/retrykit/retry/idempotency#"

// problem is an RFC 9457 problem details object, with the kind as an
// extension member.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Kind   string `json:"kind,omitempty"`
}

// writeProblem answers with problem details. retryAfter, when positive, is
// sent as Retry-After in whole seconds.
func writeProblem(w http.ResponseWriter, status int, kind, detail string, retryAfter time.Duration) {
	body := problemBody(status, kind, detail)
	h := w.Header()
	h.Set("Content-Type", problemType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((retryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

const problemType = "application/problem+json"

func problemBody(status int, kind, detail string) []byte {
	typ := "about:blank"
	if anchor, ok := problemTypes[kind]; ok {
		typ = problemTypeBase + anchor
	}
	p := problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: detail, Kind: kind}
	body, _ := json.Marshal(p) // a struct of strings and an int always marshals
	return body
}

// incompleteProblem is the stored response, with KeepFailures, of a request
// whose response was incomplete: a problem, never the fragment.
func incompleteProblem() []byte {
	body := problemBody(http.StatusInternalServerError, kindIncomplete,
		"the request with this Idempotency-Key ran, but its response was cut off before it was complete; "+
			"it may have taken effect, and its response cannot be replayed")
	return encodeResponse(http.StatusInternalServerError, http.Header{"Content-Type": {problemType}}, body, nil)
}

// problemKind returns the error code in an error body: the "kind" or "code"
// member of a JSON object, or of its "error" object, or the last segment of
// a problem "type" URI; "" if there is none. Members of unexpected types are
// skipped.
func problemKind(body []byte) string {
	var doc struct {
		errorBody
		Error json.RawMessage `json:"error"`
	}
	if !decodeLoosely(body, &doc) {
		return ""
	}
	if k := doc.errorBody.kind(); k != "" {
		return k
	}
	var inner errorBody
	if len(doc.Error) > 0 && decodeLoosely(doc.Error, &inner) {
		return inner.kind()
	}
	return ""
}

// decodeLoosely decodes a JSON object into v, keeping the members that fit.
func decodeLoosely(b []byte, v any) bool {
	err := json.Unmarshal(b, v)
	var typeErr *json.UnmarshalTypeError
	return err == nil || errors.As(err, &typeErr)
}

type errorBody struct {
	Kind string `json:"kind"`
	Code string `json:"code"`
	Type string `json:"type"`
}

func (b errorBody) kind() string {
	switch {
	case b.Kind != "":
		return b.Kind
	case b.Code != "":
		return b.Code
	case b.Type == "" || b.Type == "about:blank":
		return ""
	}
	t := b.Type
	if i := strings.LastIndexAny(t, "/#:"); i >= 0 {
		t = t[i+1:]
	}
	for kind, anchor := range problemTypes {
		if t == anchor {
			return kind
		}
	}
	return t
}
