// Package faultproxy stands between a client and a real server on loopback
// and breaks the connection between them on demand, for the outage tests of
// every backend (Redis, PostgreSQL, gRPC). It forwards bytes; it knows no
// protocol, unless a test gives it one to cut requests apart (Config).
//
// The faults, switched at run time with Set and safe for concurrent use:
//
//	fault        what the client sees
//	Latency      every chunk of bytes, in each direction, arrives late
//	BlackHole    a hung server: connections are accepted and requests read,
//	             nothing answers; what was held is passed on when the hole
//	             closes (a stopped process that is resumed)
//	Reset        the connection is reset (RST) in the middle of the server's
//	             answer, after ResetAfter more bytes of it
//	SlowClose    a side's close reaches the other side late
//	Refuse       new connections are refused (the port is closed, as when the
//	             server is gone); established ones carry on
//
// DropReply loses the server's reply to one chosen request, with its
// connection: the server did the work, the client cannot know it (an
// ambiguous commit, made deterministic).
//
// The zero Faults forwards everything unchanged; Set(Faults{}) heals.
//
// Log records an outage test's calls, for the checks every such test makes:
// no call blocks past its deadline plus a margin (Overshoot), and service
// recovers within a stated time once the outage ends (Recovery).
package faultproxy
