package main

// before orders events by time, then by the order they were scheduled.
func (e event) before(o event) bool { return e.at < o.at || (e.at == o.at && e.seq < o.seq) }
