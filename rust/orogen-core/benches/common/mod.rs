//! What several bench binaries share (`#[path = "common/mod.rs"] mod common;`).

/// CPU seconds (user + system, all threads) the process has used: with other processes
/// sharing the cores, wall time alone misreports the speed of the code.
#[cfg(target_os = "linux")]
pub fn cpu_secs() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

#[cfg(not(target_os = "linux"))]
pub fn cpu_secs() -> f64 {
    f64::NAN
}
