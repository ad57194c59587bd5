//! A worker thread as the simulator and the planet keep it: its handle, the channel it
//! reports on and its cancel flag; cancelled and joined when dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::thread::JoinHandle;

pub(crate) struct Worker<M> {
    pub(crate) handle: Option<JoinHandle<()>>,
    pub(crate) rx: Receiver<M>,
    pub(crate) cancel: Arc<AtomicBool>,
    /// True once its last message (finished or failed) arrived; the thread then ends.
    pub(crate) done: bool,
}

impl<M> Worker<M> {
    pub(crate) fn new(handle: JoinHandle<()>, rx: Receiver<M>, cancel: Arc<AtomicBool>) -> Self {
        Worker {
            handle: Some(handle),
            rx,
            cancel,
            done: false,
        }
    }

    /// Sets the cancel flag and waits for the thread (it stops within one step).
    pub(crate) fn cancel_and_join(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

impl<M> Drop for Worker<M> {
    fn drop(&mut self) {
        self.cancel_and_join();
    }
}
