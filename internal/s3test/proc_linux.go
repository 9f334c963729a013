package s3test

import "syscall"

// sysProcAttr puts MinIO in a process group of its own and has the kernel
// kill it when the test binary dies without calling Stop (a test timeout's
// panic, a Ctrl-C, a crash), so no MinIO outlives its tests.
//
// Pdeathsig fires when the OS thread that started the child exits, not the
// process. The Go runtime only ends a thread when a goroutine exits while
// locked to it (runtime.LockOSThread), which tests here do not do.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
