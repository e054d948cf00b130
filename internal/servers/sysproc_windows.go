package servers

import "syscall"

func childAttrs() *syscall.SysProcAttr { return nil }
