package classify

// Reasons of grpcretry's status table, one per gRPC status code it
// classifies and three of its own rules. They are defined here, with every
// other class, so that code which observes the retry loop (otelretry's
// retry.class values) knows them without importing grpc-go.
const (
	ReasonGRPCCanceled           = "grpc cancelled"
	ReasonGRPCUnknown            = "grpc unknown"
	ReasonGRPCInvalidArgument    = "grpc invalid argument"
	ReasonGRPCDeadlineExceeded   = "grpc deadline exceeded"
	ReasonGRPCNotFound           = "grpc not found"
	ReasonGRPCAlreadyExists      = "grpc already exists"
	ReasonGRPCPermissionDenied   = "grpc permission denied"
	ReasonGRPCResourceExhausted  = "grpc resource exhausted"
	ReasonGRPCFailedPrecondition = "grpc failed precondition"
	ReasonGRPCAborted            = "grpc aborted"
	ReasonGRPCOutOfRange         = "grpc out of range"
	ReasonGRPCUnimplemented      = "grpc unimplemented"
	ReasonGRPCInternal           = "grpc internal"
	ReasonGRPCUnavailable        = "grpc unavailable"
	ReasonGRPCDataLoss           = "grpc data loss"
	ReasonGRPCUnauthenticated    = "grpc unauthenticated"
	// ReasonGRPCPushbackStop: the server's grpc-retry-pushback-ms trailer
	// said not to retry (gRFC A6).
	ReasonGRPCPushbackStop = "grpc pushback: do not retry"
	// ReasonGRPCCallerDeadline: DEADLINE_EXCEEDED after the caller's own
	// deadline had passed.
	ReasonGRPCCallerDeadline = "grpc deadline exceeded: the caller's own"
	// ReasonGRPCReplayOverflow: a stream that failed before its first
	// reply had sent more than it keeps to replay.
	ReasonGRPCReplayOverflow = "grpc stream: too much sent to replay"
)
