package servers

// processAlive cannot tell on Windows; containers are then kept, never wrongly removed.
func processAlive(pid int) bool { return true }
