package target

import "syscall"

func childAttrs() *syscall.SysProcAttr { return nil }
