//! Ctrl-C and SIGTERM: how every Strata process is asked to stop.

use strata_mysql::ShutdownHandle;

/// Completes when the process receives Ctrl-C or SIGTERM.
pub async fn wait() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Shuts `server` down, from a thread of its own, when a stop signal arrives.
pub fn on_signal(server: ShutdownHandle) {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("signal runtime");
        runtime.block_on(wait());
        server.shutdown();
    });
}
