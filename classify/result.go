package classify

// ResultFunc classifies a successful result. A Retry verdict makes the retry
// loop treat the result as a failed attempt; Stop and NoOpinion accept it.
type ResultFunc[T any] func(result T) Decision

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

// ChainResults returns a result classifier that asks each of fs in order and
// returns the first answer that is not NoOpinion. Nil entries are skipped.
func ChainResults[T any](fs ...ResultFunc[T]) ResultFunc[T] {
	list := make([]ResultFunc[T], 0, len(fs))
	for _, f := range fs {
		if f != nil {
			list = append(list, f)
		}
	}
	return func(v T) Decision {
		for _, f := range list {
			if d := f(v); d.Verdict != NoOpinion {
				return d
			}
		}
		return Decision{}
	}
}
