package main

// row is one client-side setup: a peer with its defaults, or a Retrier of
// the library. make builds its state for one run.
type row struct {
	name, scope string
	index       int
	make        func(e env) behaviour
}

// The scopes of a row's shared state.
const (
	noScope   = "-"
	shared    = "shared"     // one for every call of the run: one process, or the fleet
	perClt    = "per-client" // one per client: a process each
	perCallSc = "per-call"   // built for each call
)

var rows = numbered([]row{
	{name: "no-retries", scope: noScope, make: func(env) behaviour { return noRetries{} }},
	{name: "retryablehttp", scope: noScope, make: func(env) behaviour { return retryablehttp{} }},
	{name: "cenkalti-v4", scope: noScope, make: func(e env) behaviour { return cenkalti{e: e} }},
	{name: "avast-v5", scope: noScope, make: func(e env) behaviour { return avast{e: e} }},
	{name: "grpc-throttling", scope: perClt, make: func(e env) behaviour { return newGRPC(e, clients) }},
	{name: "grpc-throttling", scope: shared, make: func(e env) behaviour { return newGRPC(e, 1) }},
	{name: "aws-standard", scope: perClt, make: func(e env) behaviour { return newAWS(e, clients, false) }},
	{name: "aws-standard", scope: shared, make: func(e env) behaviour { return newAWS(e, 1, false) }},
	{name: "aws-legacy", scope: perClt, make: func(e env) behaviour { return newAWS(e, clients, true) }},
	{name: "aws-legacy", scope: shared, make: func(e env) behaviour { return newAWS(e, 1, true) }},
	{name: "retry-default", scope: shared, make: func(e env) behaviour { return newOurs(e, sharedBudget(defaultBudget()), nil) }},
	{name: "retry-default", scope: perClt, make: func(e env) behaviour { return newOurs(e, perClient(), nil) }},
	{name: "retry-default", scope: perCallSc, make: func(e env) behaviour { return newOurs(e, perCall, nil) }},
	{name: "retry-ratio", scope: shared, make: func(e env) behaviour {
		return newOurs(e, sharedBudget(&ratio{now: e.now}), nil)
	}},
	{name: "retry-limiter", scope: shared, make: func(e env) behaviour {
		return newOurs(e, sharedBudget(defaultBudget()), newLimiter(e))
	}},
	{name: "retry-fleet", scope: perClt, make: func(e env) behaviour { return newOurs(e, perClient(), newLimiter(e)) }},
})

func numbered(rs []row) []row {
	for i := range rs {
		rs[i].index = i
	}
	return rs
}

// find returns the row of that name and scope.
func find(name, scope string) *row {
	for i := range rows {
		if rows[i].name == name && rows[i].scope == scope {
			return &rows[i]
		}
	}
	panic("no row " + name + " " + scope)
}
