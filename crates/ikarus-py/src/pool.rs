//! The package's own rayon pools, one per thread count, created on first use.
//!
//! Private to the package (never rayon's global pool, which the host program or another
//! extension may own) and safe after `fork`: a child process does not inherit the parent's
//! threads, so the pools remember the process id that built them and are rebuilt when it
//! changes (the parent's pool objects are forgotten in the child, never joined).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

struct Pools {
    pid: u32,
    by_threads: HashMap<usize, Arc<rayon::ThreadPool>>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

/// The default thread count: one per core the process may use.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// The pool of `threads` threads for this process.
///
/// # Errors
/// `RuntimeError` when the operating system refuses the threads.
pub fn pool(threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    let threads = threads.max(1);
    let pid = std::process::id();
    let mut guard = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if guard.as_ref().is_some_and(|p| p.pid != pid) {
        // Forked: the pools' threads live only in the parent. Dropping would signal threads
        // that are not there; forget them instead.
        std::mem::forget(guard.take());
    }
    let pools = guard.get_or_insert_with(|| Pools {
        pid,
        by_threads: HashMap::new(),
    });
    if let Some(pool) = pools.by_threads.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("ikarus-{threads}-{i}"))
        .build()
        .map_err(|e| {
            PyRuntimeError::new_err(format!("ikarus: cannot start {threads} threads: {e}"))
        })?;
    let pool = Arc::new(pool);
    pools.by_threads.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

/// `(pid, [thread counts])` of the pools alive in this process (for tests of the fork rule).
#[pyfunction]
pub fn pool_info() -> (u32, Vec<usize>) {
    let guard = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    match guard.as_ref() {
        Some(p) if p.pid == std::process::id() => {
            let mut counts: Vec<usize> = p.by_threads.keys().copied().collect();
            counts.sort_unstable();
            (p.pid, counts)
        }
        _ => (std::process::id(), Vec::new()),
    }
}
