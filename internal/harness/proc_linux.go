package harness

import "syscall"

// SysProcAttr returns the attributes for a child server's exec.Cmd: a
// process group of its own, so that SignalGroup reaches it and anything it
// spawned at once and a Ctrl-C at the terminal reaches only the test
// binary, and a parent-death signal, so that the kernel kills the child
// when the test binary dies without stopping it (a test timeout's panic, a
// Ctrl-C, a crash) and no server outlives its tests.
//
// Pdeathsig fires when the OS thread that started the child exits, not the
// process. The Go runtime only ends a thread when a goroutine exits while
// locked to it (runtime.LockOSThread), which the harnesses do not do.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
