//go:build integration && !linux

package integration

import "os/exec"

// dieWithTest does nothing where the kernel cannot tie a child's life to
// its parent's: a killed test may leave its servers running there.
func dieWithTest(*exec.Cmd) {}
