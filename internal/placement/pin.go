package placement

// Pinned is argv run on the CPUs cpus lists, as common.sh's pinned runs it:
// taskset -c CPUS ARGV... (taskset execs it), or argv as it is when cpus is
// "" (not pinned). The runners pin what they start as the driver with
// IDPBENCH_DRIVER_CPUS (EnvDriver).
func Pinned(cpus string, argv ...string) []string {
	if cpus == "" {
		return argv
	}
	return append([]string{"taskset", "-c", cpus}, argv...)
}
