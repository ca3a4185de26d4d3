package redis

// Scripts names the SHA1 of every script the queue runs, for the test that
// checks each one's keys are in one hash slot.
var Scripts = map[string]string{
	putScript.Hash():     "put",
	putFromScript.Hash(): "put from a list",
	claimScript.Hash():   "claim",
	ackScript.Hash():     "acknowledge",
	releaseScript.Hash(): "release",
	moveScript.Hash():    "move",
	discardScript.Hash(): "discard",
	purgeScript.Hash():   "purge",
}
