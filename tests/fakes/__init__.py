"""Named fakes of the libraries and tools the probes read through (NVML, sysfs, commands)."""
