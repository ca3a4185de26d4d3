package classify

// The rules of Default, one at a time, for the tests.
func Context(err error) Decision       { f := scan(err); return f.contextRule() }
func Network(err error) Decision       { f := scan(err); return f.networkRule() }
func SpendCap(err error) Decision      { f := scan(err); return f.spendCapRule() }
func Upstream(err error) Decision      { f := scan(err); return f.upstreamRule() }
func HTTP(err error) Decision          { f := scan(err); return f.httpRule() }
func Misconfigured(err error) Decision { f := scan(err); return f.misconfiguredRule() }

// Status is the decision for an HTTP status code.
func Status(code int) Decision { return statusDecision(code) }
