//! [`Connection`]: the entry point. It owns the backend (embedded engine or network client), the
//! I/O runtime that runs the writers' senders, the default callback executor (one FIFO worker
//! thread), and the buffer memory shared by its writers.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use fluss_writer_dispatch::{in_callback, Clock, Deadline, Executor, Permits, SystemClock, WorkerHooks};

use crate::admin::Admin;
use crate::backend::{Backend, LeaderFollowing};
use crate::config::Config;
use crate::embedded::EmbeddedEngine;
use crate::error::{ClientCode, Error, Result};
use crate::metadata::TablePath;
use crate::table::Table;
use crate::write::WriterCore;

/// Options for [`Connection::connect_with`] that bindings and tests need.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ConnectOptions {
    /// Hooks around the default executor's worker thread (the Python binding takes the GIL once
    /// per group of jobs here).
    pub worker_hooks: Option<Arc<dyn WorkerHooks>>,
    /// The clock used for deadlines, linger and latency (tests inject a manual clock).
    pub clock: Option<Arc<dyn Clock>>,
}

impl ConnectOptions {
    /// Set the hooks around the default executor's worker thread.
    pub fn with_worker_hooks(mut self, hooks: Arc<dyn WorkerHooks>) -> Self {
        self.worker_hooks = Some(hooks);
        self
    }

    /// Set the clock used for deadlines, linger and latency.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }
}

pub(crate) struct ConnInner {
    pub config: Arc<Config>,
    pub backend: Arc<dyn Backend>,
    pub embedded: Option<Arc<EmbeddedEngine>>,
    pub executor: Executor,
    pub worker_hooks: Option<Arc<dyn WorkerHooks>>,
    pub buffer: Arc<Permits>,
    pub clock: Arc<dyn Clock>,
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
    writers: Mutex<Vec<Weak<WriterCore>>>,
    closed: AtomicBool,
    pid: u32,
}

impl ConnInner {
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Usable from this process and not closed.
    pub fn check_usable(&self) -> Result<()> {
        if std::process::id() != self.pid {
            return Err(Error::client(
                ClientCode::ForkedProcess,
                "this connection was created before fork(); it cannot be used in the child process, open a new one",
            ));
        }
        if self.is_closed() {
            return Err(Error::client(ClientCode::ConnectionClosed, "the connection is closed"));
        }
        Ok(())
    }

    pub fn spawn_sender(&self, fut: impl Future<Output = ()> + Send + 'static) {
        self.handle.spawn(fut);
    }

    pub fn register_writer(&self, w: &Arc<WriterCore>) {
        let mut ws = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        ws.retain(|x| x.strong_count() > 0);
        ws.push(Arc::downgrade(w));
    }

    /// Send every open batch of this connection's writers now instead of after their linger: a
    /// submission is about to wait for the buffer memory they share, and only completions free
    /// it (the rule Kafka's accumulator applies when its buffer pool has waiters).
    pub fn send_open_batches(&self) {
        let writers: Vec<Arc<WriterCore>> = {
            let ws = self.writers.lock().unwrap_or_else(|p| p.into_inner());
            ws.iter().filter_map(Weak::upgrade).collect()
        };
        writers.iter().for_each(|w| w.send_open_batches());
    }

    /// Run a future on the I/O runtime and wait for it. Never call from an I/O thread.
    pub fn block_on<F: Future + Send + 'static>(&self, f: F) -> F::Output
    where
        F::Output: Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::channel();
        self.handle.spawn(async move {
            let _ = tx.send(f.await);
        });
        rx.recv().expect("the I/O runtime dropped a request")
    }
}

impl Drop for ConnInner {
    fn drop(&mut self) {
        self.backend.close();
        if let Some(rt) = self.runtime.lock().unwrap_or_else(|p| p.into_inner()).take() {
            rt.shutdown_background();
        }
    }
}

/// A connection to the embedded engine (`"embedded"`, `"embedded:<dir>"`) or to a Fluss cluster
/// (`"host:port[,host:port]"`). Cheap to clone; safe to share between threads.
#[derive(Clone)]
pub struct Connection {
    pub(crate) inner: Arc<ConnInner>,
}

impl Connection {
    /// Connect with a configuration (its `bootstrap_servers` says where: `"embedded"`,
    /// `"embedded:<dir>"` or `"host:port[,host:port]"`). No address is
    /// [`ClientCode::InvalidConfig`]: the embedded engine is opened only when named.
    pub fn connect(config: Config) -> Result<Connection> {
        Connection::connect_with(config, ConnectOptions::default())
    }

    /// Connect to `bootstrap` with defaults for everything else.
    pub fn open(bootstrap: &str) -> Result<Connection> {
        let mut c = Config::default();
        c.set("bootstrap.servers", bootstrap)?;
        Connection::connect(c)
    }

    /// Connect with options for bindings and tests.
    pub fn connect_with(config: Config, opts: ConnectOptions) -> Result<Connection> {
        config.validate()?;
        config.check_address()?;
        let config = Arc::new(config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.io_threads)
            .thread_name("fluss-writer-io")
            .enable_all()
            .build()
            .map_err(|e| Error::client(ClientCode::Io, format!("cannot start the I/O runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let bootstrap = config.bootstrap_servers.clone();
        let (backend, embedded): (Arc<dyn Backend>, Option<Arc<EmbeddedEngine>>) = if bootstrap == "embedded"
            || bootstrap.starts_with("embedded:")
        {
            if config.security_protocol != crate::config::SecurityProtocol::Plaintext {
                log::warn!("client.security.protocol is ignored by the embedded engine: it runs in this process, with no listener to authenticate on");
            }
            let engine = EmbeddedEngine::open(&bootstrap, &config)?;
            (engine.clone(), Some(engine))
        } else {
            let backend = runtime.block_on(crate::cluster::NetworkBackend::connect(&bootstrap, config.clone()))?;
            (backend, None)
        };
        // Both backends follow the coordinator leader the same way (Fluss 1.0 standbys).
        let backend: Arc<dyn Backend> = Arc::new(LeaderFollowing::new(backend, config.request_timeout, config.retry_backoff));
        let clock = opts.clock.unwrap_or_else(|| Arc::new(SystemClock::new()));
        let executor = Executor::fifo("fluss-writer-callbacks", opts.worker_hooks.clone());
        Ok(Connection {
            inner: Arc::new(ConnInner {
                buffer: Arc::new(Permits::new(config.buffer_memory_size)),
                config,
                backend,
                embedded,
                executor,
                worker_hooks: opts.worker_hooks,
                clock,
                runtime: Mutex::new(Some(runtime)),
                handle,
                writers: Mutex::new(Vec::new()),
                closed: AtomicBool::new(false),
                pid: std::process::id(),
            }),
        })
    }

    /// DDL and metadata.
    pub fn admin(&self) -> Admin {
        Admin::new(self.inner.clone())
    }

    /// A table handle to create writers from.
    pub fn get_table(&self, path: &TablePath) -> Result<Table> {
        Table::load(self.inner.clone(), path)
    }

    /// The embedded engine behind this connection (read-back and fault injection), if any.
    pub fn embedded(&self) -> Option<&Arc<EmbeddedEngine>> {
        self.inner.embedded.as_ref()
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The default callback executor (one FIFO worker thread).
    pub fn executor(&self) -> &Executor {
        &self.inner.executor
    }

    /// The backend, for read-back helpers.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.inner.backend
    }

    /// Run a future on the connection's I/O runtime and wait for it (read-back helpers,
    /// examples). Must not be called from inside an async context of that runtime.
    pub fn block_on<F: Future + Send + 'static>(&self, f: F) -> F::Output
    where
        F::Output: Send + 'static,
    {
        self.inner.block_on(f)
    }

    /// Close every writer of this connection (each gets up to `timeout` to drain; then pending
    /// operations complete with `WRITER_CLOSED`), stop the callback worker after it ran what is
    /// queued, and release the backend. Later calls fail with `CONNECTION_CLOSED`.
    pub fn close(&self, timeout: Option<Duration>) -> Result<()> {
        if in_callback() {
            return Err(Error::client(ClientCode::CalledFromCallback, "Connection::close called from inside a completion callback"));
        }
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let writers: Vec<Arc<WriterCore>> = {
            let ws = self.inner.writers.lock().unwrap_or_else(|p| p.into_inner());
            ws.iter().filter_map(Weak::upgrade).collect()
        };
        let mut result = Ok(());
        for w in &writers {
            if let Err(e) = w.close(timeout) {
                result = Err(e);
            }
        }
        // A writer that timed out was aborted: its sender dispatches the pending operations with
        // WRITER_CLOSED. Let those jobs reach the executor before it stops, or their callbacks
        // would be dropped unrun (C1).
        let exit_by = crate::timeouts::deadline_after(timeout);
        for w in &writers {
            let left = exit_by.map(|d| d.saturating_duration_since(std::time::Instant::now()));
            w.wait_sender_exited(left);
        }
        let deadline = match timeout {
            None => Deadline::never(),
            Some(t) => Deadline::after(t, &*self.inner.clock),
        };
        self.inner.executor.shutdown_with_clock(deadline, &*self.inner.clock);
        self.inner.backend.close();
        result
    }

    /// Whether `close` was called.
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }
}
