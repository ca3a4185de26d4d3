package main

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// onTerminal runs the binary with a pseudo-terminal as its standard input,
// on which answer has been typed.
func onTerminal(t *testing.T, answer string, args ...string) result {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	var n, unlock uint32
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatal(err)
	}
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	if answer == "" {
		answer = "\x04" // end of file, typed: the person closed the input
	}
	if _, err := master.WriteString(answer); err != nil {
		t.Fatal(err)
	}
	return dlqWith(t, slave, nil, args...)
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
