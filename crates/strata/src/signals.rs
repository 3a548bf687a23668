//! Ctrl-C and SIGTERM: how every Strata process is asked to stop.

use strata_mysql::ShutdownHandle;

/// Through this variable `strata playground` gives the roles it starts its process id.
pub const PLAYGROUND_PID_ENV: &str = "STRATA_PLAYGROUND_PID";

/// A role started by `strata playground` goes when the playground goes, however it goes: a
/// playground that stops normally stops its roles with SIGTERM first; one that is killed
/// outright takes them with it, as the kernel then sends each SIGKILL (`PR_SET_PDEATHSIG`),
/// which loses nothing acknowledged, as after any crash. So a local cluster leaves no orphans
/// holding its ports. A role started any other way is left alone.
pub fn stop_with_playground() -> Result<(), String> {
    let Ok(playground) = std::env::var(PLAYGROUND_PID_ENV) else {
        return Ok(());
    };
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|e| format!("asking to stop with the playground: {e}"))?;
    // The playground may have gone before that: then this process has another parent.
    let parent = rustix::process::Pid::as_raw(rustix::process::getppid());
    if playground.parse::<i32>().ok() != Some(parent) {
        return Err(format!(
            "the playground that started this process (pid {playground}) is gone"
        ));
    }
    Ok(())
}

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
