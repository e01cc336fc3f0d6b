package tools

// openNonblock is 0 on Windows: it has no FIFOs to wait on.
const openNonblock = 0
