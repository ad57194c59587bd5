//! Helpers shared by the integration tests' modules.

/// Runs `f` on a fresh rayon pool of `threads` threads: the tests that a result has the same
/// bytes whatever the thread count.
pub fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
        .install(f)
}
