package classify

// Completion classifies an LLM completion by its content and finish reason.
// An empty content or a "content_filter" finish is the model's final answer,
// never worth retrying: Completion returns Stop for them, so that a chain
// placed before a caller's own "retry if …" rule accepts them, and NoOpinion
// otherwise.
func Completion(content, finishReason string) Decision {
	switch {
	case finishReason == "content_filter":
		return Decision{Verdict: Stop, Reason: ReasonContentFiltered}
	case content == "":
		return Decision{Verdict: Stop, Reason: ReasonEmptyOutput}
	}
	return Decision{}
}
