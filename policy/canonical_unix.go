package policy

import "syscall"

// syscallENOTDIR: a component that is a file used as a folder does not exist as a folder.
var syscallENOTDIR = syscall.ENOTDIR
