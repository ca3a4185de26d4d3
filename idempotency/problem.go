package idempotency

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Kinds of idempotency failure, as servers report them in an error body and
// classify.StatusError.Kind carries them. The first three are the LLM
// gateway's names; the middleware sends each in the "kind" member of its
// problem details (RFC 9457), whose "type" is this documentation's anchor for
// the constant.
const (
	// KindInProgress (409): a request with this key is still being processed.
	// Retryable: wait (Retry-After) and send it again to collect the result.
	KindInProgress = "idempotency-in-progress"
	// KindKeyReuse (422 from the middleware, 409 from the gateway): the key
	// was used with a different request. Never retried; never answered by a
	// new key for an unchanged request.
	KindKeyReuse = "idempotency-key-reuse"
	// KindNotRetained (409): the first request succeeded but its response was
	// larger than the retention cap, so it cannot be replayed.
	KindNotRetained = "idempotency-response-not-retained"
	// KindKeyMissing (400): the route requires an Idempotency-Key.
	KindKeyMissing = "idempotency-key-missing"
	// KindKeyInvalid (400): the Idempotency-Key is longer than 255
	// characters, contains control characters, is a malformed quoted string
	// or is sent more than once.
	KindKeyInvalid = "idempotency-key-invalid"
	// KindRequestTooLarge (413): the body is larger than the middleware reads
	// to fingerprint a request (WithMaxRequestBody).
	KindRequestTooLarge = "idempotency-request-too-large"
	// KindStoreUnavailable (503): the idempotency store failed, or is full;
	// nothing was run. Retryable.
	KindStoreUnavailable = "idempotency-store-unavailable"
	// KindScopeFull (429): the client holds as many keys as its share of the
	// store allows (ErrScopeFull) until some expire; nothing was run. Other
	// clients are unaffected.
	KindScopeFull = "idempotency-scope-full"
)

// problemTypes documents each kind: the anchor of its constant in this
// package's documentation.
var problemTypes = map[string]string{
	KindInProgress:       "KindInProgress",
	KindKeyReuse:         "KindKeyReuse",
	KindNotRetained:      "KindNotRetained",
	KindKeyMissing:       "KindKeyMissing",
	KindKeyInvalid:       "KindKeyInvalid",
	KindRequestTooLarge:  "KindRequestTooLarge",
	KindStoreUnavailable: "KindStoreUnavailable",
	KindScopeFull:        "KindScopeFull",
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
	typ := "about:blank"
	if anchor, ok := problemTypes[kind]; ok {
		typ = problemTypeBase + anchor
	}
	p := problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: detail, Kind: kind}
	body, _ := json.Marshal(p) // a struct of strings and an int always marshals
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int((retryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
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
