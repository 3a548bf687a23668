//! strata-fiber: blocking code run as fibers on the thread of an async runtime.
//!
//! ```text
//!   FiberPool thread ── one OS thread: a current-thread tokio runtime + a LocalSet
//!     ├─ fiber: a connection's blocking code on a stack of its own
//!     │    └─ block_on(future) ─ suspends the fiber; the thread polls the future
//!     ├─ fiber …
//!     └─ tasks: the gRPC connections that carry the fibers' requests
//! ```
//!
//! The SQL and transaction code is synchronous: a statement calls `get`, which waits for the
//! KV node's answer. On threads of its own, each such wait is two hand-offs between threads
//! (the request to the runtime's thread, the answer back), and on a small virtual machine a
//! wake-up of a thread costs more than the request's work. A fiber runs that same code on
//! the runtime's own thread: [`block_on`] suspends the fiber until its future is ready, and
//! the thread meanwhile serves other fibers and the network, taking many events per wake-up.
//!
//! [`block_on`] and [`sleep`] are the only two ways code may wait: in a fiber they suspend it,
//! on any other thread they block that thread as before. Code that may run in a fiber must
//! not block its thread any other way (no `std::thread::sleep`, no condition variable waited
//! on across a request), or it stalls every fiber of the thread.
//!
//! This crate is the one place of Strata with `unsafe` code: the future a fiber waits for
//! lives on the fiber's stack, and the thread polls it through a pointer while the fiber is
//! suspended (see `suspend`).

#![allow(unsafe_code)]

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

/// The stack of one fiber, and of a connection's thread: address space reserved up front,
/// memory taken as it is touched. A statement's tree is as deep as the parser lets it be
/// (sqlparser's nesting limit times the SQL dialect's longest left-deep run of operators), and
/// every walk of it (binding, planning, evaluation, dropping) recurses along that depth: the
/// deepest such statement needs several MiB, more than a thread's default 2 MiB.
pub const FIBER_STACK_BYTES: usize = 16 << 20;

/// The future a suspended fiber waits for, on that fiber's stack.
type Waiting = NonNull<dyn Future<Output = ()>>;

type FiberYielder = Yielder<(), Waiting>;

/// How long a fiber may compute before [`yield_if_long`] lets the other fibers of its thread
/// run: a statement that sorts or joins in memory for seconds delays the others by this much
/// at a time, not by its whole run.
pub const FIBER_TIME_SLICE: Duration = Duration::from_millis(2);
/// Calls of [`yield_if_long`] between two looks at the clock.
const CALLS_PER_CLOCK_LOOK: u32 = 64;

thread_local! {
    /// The yielder of the fiber running on this thread; null outside fibers.
    static CURRENT: Cell<*const FiberYielder> = const { Cell::new(ptr::null()) };
    /// When the running fiber was last resumed, and calls of [`yield_if_long`] since the clock
    /// was last read.
    static SLICE: Cell<(Option<Instant>, u32)> = const { Cell::new((None, 0)) };
}

/// Returns whether the caller runs in a fiber.
pub fn in_fiber() -> bool {
    CURRENT.with(|current| !current.get().is_null())
}

/// Runs `future` to completion: in a fiber by suspending the fiber until it is ready, on any
/// other thread by blocking the thread on `runtime`.
pub fn block_on<F: Future>(runtime: &Handle, future: F) -> F::Output {
    let yielder = CURRENT.with(Cell::get);
    if yielder.is_null() {
        runtime.block_on(future)
    } else {
        // SAFETY: CURRENT holds the yielder of the fiber running on this thread, set by that
        // fiber; the yielder lives on the fiber's stack for the fiber's whole life.
        suspend(unsafe { &*yielder }, future)
    }
}

/// Pauses for `duration`: in a fiber by suspending it, elsewhere with `std::thread::sleep`.
pub fn sleep(duration: Duration) {
    let yielder = CURRENT.with(Cell::get);
    if yielder.is_null() {
        std::thread::sleep(duration);
    } else {
        // SAFETY: as in `block_on`.
        suspend(unsafe { &*yielder }, tokio::time::sleep(duration));
    }
}

/// Lets the thread's other fibers and tasks run before this fiber goes on (a no-op outside
/// fibers). For loops that compute long without waiting for anything.
pub fn yield_now() {
    let yielder = CURRENT.with(Cell::get);
    if !yielder.is_null() {
        // SAFETY: as in `block_on`.
        suspend(unsafe { &*yielder }, tokio::task::yield_now());
    }
}

/// Yields ([`yield_now`]) once the running fiber has computed for [`FIBER_TIME_SLICE`] since
/// it last resumed; a no-op outside fibers. Cheap enough for every row of a loop: it reads the
/// clock once every few dozen calls.
pub fn yield_if_long() {
    let (resumed, calls) = SLICE.with(Cell::get);
    let Some(resumed) = resumed else { return };
    if calls + 1 < CALLS_PER_CLOCK_LOOK {
        SLICE.with(|slice| slice.set((Some(resumed), calls + 1)));
        return;
    }
    SLICE.with(|slice| slice.set((Some(resumed), 0)));
    if resumed.elapsed() >= FIBER_TIME_SLICE {
        yield_now();
    }
}

/// A mutex that may be held while its holder waits ([`block_on`], [`sleep`]). A fiber that
/// finds it locked suspends until it is free, so the fiber holding it can go on; with a
/// thread's mutex it would block the thread that fiber runs on, for good. Outside fibers it
/// blocks the thread.
#[derive(Debug, Default)]
pub struct Mutex<T> {
    inner: tokio::sync::Mutex<T>,
}

/// The lock of a [`Mutex`], released when dropped.
pub type MutexGuard<'a, T> = tokio::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub fn new(value: T) -> Mutex<T> {
        Mutex {
            inner: tokio::sync::Mutex::new(value),
        }
    }

    /// Takes the lock, waiting for it as [`block_on`] waits.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        let yielder = CURRENT.with(Cell::get);
        if yielder.is_null() {
            self.inner.blocking_lock()
        } else {
            // SAFETY: as in `block_on`.
            suspend(unsafe { &*yielder }, self.inner.lock())
        }
    }

    /// Takes the lock if it is free.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        self.inner.try_lock().ok()
    }
}

/// Suspends the running fiber until `future` is ready, and returns its output.
fn suspend<F: Future>(yielder: &FiberYielder, future: F) -> F::Output {
    let mut output = None;
    {
        let mut task = std::pin::pin!(async {
            output = Some(future.await);
        });
        let task: &mut (dyn Future<Output = ()> + '_) =
            // SAFETY: `task` is never moved: it stays on this stack frame, pinned, until the
            // end of this block.
            unsafe { task.as_mut().get_unchecked_mut() };
        // SAFETY: the pointer outlives its borrow only in type. The fiber's driver
        // (`Fiber::poll`) polls it while this fiber is suspended below, and forgets it before
        // it resumes the fiber, so it is never used after this block ends. If the fiber is
        // dropped while suspended, its stack is unwound through this frame, which drops `task`
        // after the driver has stopped using the pointer.
        let waiting: Waiting = unsafe {
            std::mem::transmute::<NonNull<dyn Future<Output = ()> + '_>, Waiting>(NonNull::from(
                task,
            ))
        };
        yielder.suspend(waiting);
        // Resumed: the driver cleared CURRENT after the last resume returned; set it again.
        CURRENT.with(|current| current.set(yielder));
    }
    output.expect("a fiber is resumed only once the future it waits for is ready")
}

/// A fiber: `body` on a stack of its own, driven as a future on the current thread. It must be
/// polled from inside a tokio runtime (the futures it waits for may need its reactor).
pub struct Fiber {
    /// What the fiber waits for; polled before the fiber is resumed. Declared before
    /// `coroutine` so it is dropped first.
    waiting: Option<Waiting>,
    coroutine: Coroutine<(), Waiting, ()>,
}

impl Fiber {
    /// Prepares `body` to run as a fiber; nothing runs until the fiber is polled. Fails if the
    /// stack cannot be mapped.
    pub fn new(body: impl FnOnce() + 'static) -> std::io::Result<Fiber> {
        let stack = DefaultStack::new(FIBER_STACK_BYTES)?;
        let coroutine = Coroutine::with_stack(stack, move |yielder: &FiberYielder, ()| {
            CURRENT.with(|current| current.set(yielder));
            body();
        });
        Ok(Fiber {
            waiting: None,
            coroutine,
        })
    }
}

/// Restores the thread's CURRENT when a resume returns or unwinds.
struct RestoreCurrent(*const FiberYielder);

impl Drop for RestoreCurrent {
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.0));
        // Outside the fiber no slice runs (a fiber resumed from a fiber does not happen).
        SLICE.with(|slice| slice.set((None, 0)));
    }
}

impl Future for Fiber {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            if let Some(waiting) = this.waiting {
                // SAFETY: `waiting` points at the pinned future of the suspended fiber's
                // `suspend` frame, alive until the fiber is resumed (see `suspend`).
                let future = unsafe { Pin::new_unchecked(&mut *waiting.as_ptr()) };
                if future.poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.waiting = None;
            }
            let _restore = RestoreCurrent(CURRENT.with(Cell::get));
            SLICE.with(|slice| slice.set((Some(Instant::now()), 0)));
            match this.coroutine.resume(()) {
                CoroutineResult::Yield(waiting) => this.waiting = Some(waiting),
                CoroutineResult::Return(()) => return Poll::Ready(()),
            }
        }
    }
}

/// Work handed to a fiber thread.
type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// On a thread of a [`FiberPool`]: its index in the pool, and its runtime.
    static POOL_THREAD: std::cell::RefCell<Option<(usize, Handle)>> =
        const { std::cell::RefCell::new(None) };
}

/// The index in its [`FiberPool`] of the thread the caller runs on (in a fiber or a task of
/// that thread), with the thread's runtime; `None` on any other thread. Clients that keep a
/// connection per pool thread pick theirs with it, so that a fiber's requests stay on its
/// own thread.
pub fn pool_thread() -> Option<(usize, Handle)> {
    POOL_THREAD.with(|thread| thread.borrow().clone())
}

/// One OS thread that runs fibers, and the runtime whose tasks share the thread with them.
struct FiberThread {
    jobs: mpsc::UnboundedSender<Job>,
    handle: Handle,
}

impl FiberThread {
    /// Starts thread `index` of a pool; it runs until the process ends.
    fn start(name: &str, index: usize) -> std::io::Result<FiberThread> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
        let thread_handle = handle.clone();
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                POOL_THREAD.with(|thread| *thread.borrow_mut() = Some((index, thread_handle)));
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, async move {
                    while let Some(job) = queue.recv().await {
                        match Fiber::new(job) {
                            Ok(fiber) => drop(tokio::task::spawn_local(fiber)),
                            Err(error) => tracing::error!(%error, "cannot map a fiber's stack"),
                        }
                    }
                    // Every sender is gone: let the fibers still running finish.
                    std::future::pending::<()>().await
                })
            })?;
        Ok(FiberThread { jobs, handle })
    }
}

/// Threads that run fibers, each with a current-thread runtime of its own. Work is handed to
/// them in turn.
#[derive(Clone)]
pub struct FiberPool {
    threads: Arc<[FiberThread]>,
    next: Arc<AtomicUsize>,
}

impl FiberPool {
    /// Starts `threads` threads (at least one), named `name-0`, `name-1`, …
    pub fn start(name: &str, threads: usize) -> std::io::Result<FiberPool> {
        let threads = (0..threads.max(1))
            .map(|index| FiberThread::start(&format!("{name}-{index}"), index))
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(FiberPool {
            threads: threads.into(),
            next: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The runtime of the pool's first thread: for RPC clients shared by the whole process
    /// (and for the threads outside the pool that use them).
    pub fn handle(&self) -> &Handle {
        &self.threads[0].handle
    }

    /// Runs `job` as a fiber on the next thread in turn. Returns false if it has stopped.
    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) -> bool {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        self.threads[index].jobs.send(Box::new(job)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc as std_mpsc;
    use std::time::Instant;

    use super::*;

    #[test]
    fn a_fiber_waits_without_blocking_its_thread() {
        let thread = FiberPool::start("fiber-test", 1).unwrap();
        let handle = thread.handle().clone();
        let (done, finished) = std_mpsc::channel();
        // Two fibers on one thread, each waiting for the other in turn: if a wait blocked
        // the thread, the second fiber would never run and neither would finish.
        let (to_b, mut b_inbox) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let (to_a, mut a_inbox) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let (h, d) = (handle.clone(), done.clone());
        thread.spawn(move || {
            let mut value = 0;
            for _ in 0..1_000 {
                to_b.send(value).unwrap();
                value = block_on(&h, a_inbox.recv()).unwrap() + 1;
            }
            assert!(in_fiber());
            d.send(value).unwrap();
        });
        let (h, d) = (handle.clone(), done.clone());
        thread.spawn(move || {
            while let Some(value) = block_on(&h, b_inbox.recv()) {
                if to_a.send(value + 1).is_err() {
                    break;
                }
            }
            d.send(0).unwrap();
        });
        let first = finished.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first, 2_000);
        assert!(!in_fiber());
    }

    #[test]
    fn a_fiber_that_computes_long_lets_the_others_of_its_thread_run() {
        let thread = FiberPool::start("fiber-test", 1).unwrap();
        let other_ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (started, first_started) = std_mpsc::channel();
        let (done, finished) = std_mpsc::channel();
        let flag = other_ran.clone();
        thread.spawn(move || {
            started.send(()).unwrap();
            let begun = Instant::now();
            // Computes, waiting for nothing, until the other fiber has run (or ten seconds).
            while !flag.load(Ordering::SeqCst) && begun.elapsed() < Duration::from_secs(10) {
                yield_if_long();
            }
            done.send(flag.load(Ordering::SeqCst)).unwrap();
        });
        first_started.recv_timeout(Duration::from_secs(10)).unwrap();
        let flag = other_ran.clone();
        thread.spawn(move || flag.store(true, Ordering::SeqCst));
        assert!(
            finished.recv_timeout(Duration::from_secs(20)).unwrap(),
            "the second fiber did not run while the first computed"
        );
    }

    #[test]
    fn outside_a_fiber_block_on_blocks_the_thread() {
        let thread = FiberPool::start("fiber-test", 1).unwrap();
        let started = Instant::now();
        let value = block_on(thread.handle(), async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            7
        });
        assert_eq!(value, 7);
        assert!(started.elapsed() >= Duration::from_millis(20));
        sleep(Duration::from_millis(1));
    }

    #[test]
    fn sleeping_fibers_overlap() {
        let thread = FiberPool::start("fiber-test", 1).unwrap();
        let (done, finished) = std_mpsc::channel();
        let started = Instant::now();
        for _ in 0..50 {
            let done = done.clone();
            thread.spawn(move || {
                sleep(Duration::from_millis(100));
                yield_now();
                done.send(()).unwrap();
            });
        }
        for _ in 0..50 {
            finished.recv_timeout(Duration::from_secs(10)).unwrap();
        }
        // Fifty sleeps of 100 ms on one thread end together, not one after another.
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_panic_in_a_fiber_ends_only_that_fiber() {
        let thread = FiberPool::start("fiber-test", 1).unwrap();
        let survivors = Arc::new(AtomicUsize::new(0));
        thread.spawn(|| panic!("a fiber's panic"));
        let (done, finished) = std_mpsc::channel();
        let s = survivors.clone();
        thread.spawn(move || {
            sleep(Duration::from_millis(10));
            s.fetch_add(1, Ordering::SeqCst);
            done.send(()).unwrap();
        });
        finished.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(survivors.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_mutex_held_across_a_wait_lets_the_other_fibers_of_its_thread_run() {
        let thread = FiberPool::start("fiber-test", 1).unwrap();
        let counter = Arc::new(Mutex::new(0u32));
        let (done, finished) = std_mpsc::channel();
        for _ in 0..20 {
            let (counter, done) = (counter.clone(), done.clone());
            thread.spawn(move || {
                let mut value = counter.lock();
                let seen = *value;
                // Every holder waits with the lock held; a thread's mutex here would block
                // the thread on the second fiber's lock and never let the first go on.
                sleep(Duration::from_millis(2));
                *value = seen + 1;
                drop(value);
                done.send(()).unwrap();
            });
        }
        for _ in 0..20 {
            finished.recv_timeout(Duration::from_secs(10)).unwrap();
        }
        assert_eq!(*counter.lock(), 20);
        assert!(counter.try_lock().is_some());
    }

    #[test]
    fn a_pool_hands_fibers_to_its_threads_in_turn() {
        let pool = FiberPool::start("fiber-test", 3).unwrap();
        let (done, finished) = std_mpsc::channel();
        for _ in 0..6 {
            let done = done.clone();
            pool.spawn(move || {
                let (index, _) = pool_thread().expect("on a pool thread");
                assert_eq!(
                    std::thread::current().name(),
                    Some(&*format!("fiber-test-{index}"))
                );
                done.send(index).unwrap();
            });
        }
        let mut seen: Vec<usize> = (0..6)
            .map(|_| finished.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        seen.sort();
        assert_eq!(seen, [0, 0, 1, 1, 2, 2]);
        assert!(pool_thread().is_none());
    }

    #[test]
    fn a_fiber_borrows_from_its_own_stack_across_waits() {
        let thread = FiberPool::start("fiber-test", 1).unwrap();
        let handle = thread.handle().clone();
        let (done, finished) = std_mpsc::channel();
        thread.spawn(move || {
            let words = ["a".to_string(), "b".to_string()];
            let joined = block_on(&handle, async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                words.join("+")
            });
            done.send(joined).unwrap();
        });
        assert_eq!(
            finished.recv_timeout(Duration::from_secs(10)).unwrap(),
            "a+b"
        );
    }
}
