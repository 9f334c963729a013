package harness

import "syscall"

// SysProcAttr returns the attributes for a child server's exec.Cmd.
// A process group of its own lets SignalGroup reach it and anything it
// spawned at once, and keeps a Ctrl-C at the terminal to the test binary.
// A parent-death signal makes the kernel kill the child when the test
// binary dies without stopping it (a test timeout's panic, a Ctrl-C, a
// crash), so no server outlives its tests.
//
// Pdeathsig fires when the OS thread that started the child exits, not the
// process. The Go runtime only ends a thread when a goroutine exits while
// locked to it (runtime.LockOSThread), which the harnesses do not do.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
