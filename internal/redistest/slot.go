package redistest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Slot returns the Redis Cluster hash slot of key (0–16383): CRC16 (XMODEM)
// of the key modulo 16384, or of its hash tag — the part between the first
// "{" and the next "}", when that part is not empty — so that keys sharing a
// tag share a slot.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), as Redis
// Cluster computes it.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// ScriptKeys returns the script and the keys of a command a go-redis hook
// sees (its Args): for EVAL and EVALSHA, and their _RO forms, the SHA1 of
// the script (computed for EVAL) and the keys; ok is false for any other
// command.
func ScriptKeys(args []any) (sha string, keys []string, ok bool) {
	if len(args) < 3 {
		return "", nil, false
	}
	name, _ := args[0].(string)
	body := fmt.Sprint(args[1])
	switch strings.ToLower(name) {
	case "eval", "eval_ro":
		sum := sha1.Sum([]byte(body))
		sha = hex.EncodeToString(sum[:])
	case "evalsha", "evalsha_ro":
		sha = body
	default:
		return "", nil, false
	}
	n, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil || n < 0 || 3+n > len(args) {
		return "", nil, false
	}
	for _, k := range args[3 : 3+n] {
		keys = append(keys, fmt.Sprint(k))
	}
	return sha, keys, true
}

// SameSlot reports whether keys are all in one hash slot, as a script on
// Redis Cluster needs them to be.
func SameSlot(keys ...string) bool {
	for _, k := range keys {
		if Slot(k) != Slot(keys[0]) {
			return false
		}
	}
	return true
}
