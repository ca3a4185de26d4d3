package hedge

// Config returns the configuration with its defaults filled in, for the
// tests.
func (a *Adaptive) Config() AdaptiveConfig {
	if a == nil {
		return AdaptiveConfig{}
	}
	return a.cfg
}
