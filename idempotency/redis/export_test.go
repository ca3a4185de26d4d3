package redis

// Scripts names the SHA1 of every script the store runs, for the test that
// checks each one's keys are in one hash slot.
var Scripts = map[string]string{
	claimScript.Hash():    "claim",
	extendScript.Hash():   "extend",
	completeScript.Hash(): "complete",
	releaseScript.Hash():  "release",
}
