package classify

import "iter"

// reasons is every Reason the library's classifiers give: the one list of
// failure classes. Everything that reports a class by a fixed set of values
// (the retry.class attribute of package otelretry, a dead letter's group)
// derives from it, and a test fails when a Reason… constant is missing here.
var reasons = [...]string{
	ReasonUnclassified, ReasonMarkedPermanent, ReasonMarkedRetryable, ReasonCanceled,
	ReasonTimeout, ReasonConnectTimeout, ReasonConnReset, ReasonConnRefused, ReasonConnAborted,
	ReasonBrokenPipe, ReasonUnreachable, ReasonConnClosed, ReasonDNS,
	ReasonTooManyRequests, ReasonServerError, ReasonBadGateway, ReasonUnavailable,
	ReasonGatewayTimeout, ReasonOtherServerError, ReasonNotImplemented, ReasonClientError,
	ReasonContentFiltered, ReasonEmptyOutput, ReasonResultNotAccepted, ReasonRetriedInside,
	ReasonUpstream, ReasonSpendCap, ReasonCertificate, ReasonInvalidRequest,
	ReasonTooManyRedirects,
	ReasonKeyInProgress, ReasonKeyReuse, ReasonNotRetained, ReasonStoredFailure, ReasonClaimLost,
	ReasonSerialization, ReasonDeadlock, ReasonCompletionUnknown, ReasonSQLConnection,
	ReasonSQLCannotConnect, ReasonSQLShutdown, ReasonTooManyConnections, ReasonLockNotAvailable,
	ReasonIntegrity, ReasonDataException, ReasonSyntaxOrAccess, ReasonTransactionRolled,
	ReasonAmbiguousCommit,
	ReasonGRPCCanceled, ReasonGRPCUnknown, ReasonGRPCInvalidArgument, ReasonGRPCDeadlineExceeded,
	ReasonGRPCNotFound, ReasonGRPCAlreadyExists, ReasonGRPCPermissionDenied,
	ReasonGRPCResourceExhausted, ReasonGRPCFailedPrecondition, ReasonGRPCAborted,
	ReasonGRPCOutOfRange, ReasonGRPCUnimplemented, ReasonGRPCInternal, ReasonGRPCUnavailable,
	ReasonGRPCDataLoss, ReasonGRPCUnauthenticated, ReasonGRPCPushbackStop,
	ReasonGRPCCallerDeadline, ReasonGRPCReplayOverflow,
}

// Reasons lists every Reason the library's own classifiers give, each once:
// HTTP, network, SQL, gRPC, idempotency and LLM-result classes. A Reason
// outside it is a caller's classifier's own.
func Reasons() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, r := range reasons {
			if !yield(r) {
				return
			}
		}
	}
}
