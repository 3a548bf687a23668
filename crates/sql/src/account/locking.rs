//! `FAILED_LOGIN_ATTEMPTS n PASSWORD_LOCK_TIME {days | UNBOUNDED}`: after `n` wrong passwords
//! in a row an account is blocked for that many days (or until unlocked), as in MySQL 8.0.19.
//!
//! As MySQL does, each server counts the failures it sees in memory: a restart forgets them,
//! and so does any change of the account's locking (`ALTER USER … ACCOUNT UNLOCK`, new
//! `FAILED_LOGIN_ATTEMPTS` or `PASSWORD_LOCK_TIME`), which every SQL node of a cluster sees
//! as a new [`LoginLocking::epoch`] in the catalog.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::{Identity, Login};

/// PASSWORD_LOCK_TIME UNBOUNDED, as MySQL's `User_attributes` shows it.
pub const UNBOUNDED: i32 = -1;
/// The largest FAILED_LOGIN_ATTEMPTS and PASSWORD_LOCK_TIME MySQL accepts.
pub const LOCKING_MAX: u32 = 32767;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// An account's failed-login locking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginLocking {
    /// Wrong passwords in a row that block the account (0: never).
    pub attempts: u32,
    /// Days it stays blocked ([`UNBOUNDED`]: until unlocked; 0: never blocked).
    pub lock_days: i32,
    /// Changes with every unlock or change of the locking, which forgets past failures.
    pub epoch: u64,
}

impl LoginLocking {
    /// Whether failures are counted at all: MySQL needs both options nonzero.
    pub fn tracks(&self) -> bool {
        self.attempts > 0 && self.lock_days != 0
    }
}

/// A login refused because the account is blocked (error 3955).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// PASSWORD_LOCK_TIME ([`UNBOUNDED`] or days).
    pub lock_days: i32,
    /// Whole days left (rounded up), None when unbounded.
    pub remaining_days: Option<u64>,
    /// FAILED_LOGIN_ATTEMPTS.
    pub attempts: u32,
}

impl Blocked {
    /// MySQL's message for the client `user`@`host`.
    pub fn message(&self, user: &str, host: &str) -> String {
        let (days, remaining) = match self.remaining_days {
            None => ("unlimited".to_string(), "unlimited".to_string()),
            Some(left) => (self.lock_days.to_string(), left.to_string()),
        };
        format!(
            "Access denied for user '{user}'@'{host}'. Account is blocked for {days} day(s) \
             ({remaining} day(s) remaining) due to {} consecutive failed logins.",
            self.attempts
        )
    }
}

/// One account's failures in a row, under one epoch of its locking.
#[derive(Default)]
struct Tally {
    epoch: u64,
    failures: u32,
    blocked_since: Option<Instant>,
}

/// The failed logins this server saw, for the accounts whose locking tracks them.
#[derive(Default)]
pub struct FailedLogins {
    tallies: Mutex<HashMap<Identity, Tally>>,
}

impl FailedLogins {
    /// Notes a login as `login` whose password was right or wrong; `Some` refuses it (a
    /// blocked account, or the failure that blocks it).
    pub fn outcome(&self, login: &Login, password_ok: bool) -> Option<Blocked> {
        self.outcome_at(login, password_ok, Instant::now())
    }

    fn outcome_at(&self, login: &Login, password_ok: bool, now: Instant) -> Option<Blocked> {
        let locking = login.locking;
        let mut tallies = self.tallies.lock();
        if !locking.tracks() {
            tallies.remove(&login.identity);
            return None;
        }
        if password_ok && !tallies.contains_key(&login.identity) {
            return None;
        }
        let tally = tallies.entry(login.identity.clone()).or_default();
        if tally.epoch != locking.epoch {
            *tally = Tally {
                epoch: locking.epoch,
                ..Tally::default()
            };
        }
        let blocked = |since: Instant| {
            let remaining_days = if locking.lock_days == UNBOUNDED {
                None
            } else {
                let lock = DAY * u32::try_from(locking.lock_days).unwrap_or(0);
                let left = lock.saturating_sub(now.saturating_duration_since(since));
                if left.is_zero() {
                    return None;
                }
                Some(left.as_secs().div_ceil(DAY.as_secs()))
            };
            Some(Blocked {
                lock_days: locking.lock_days,
                remaining_days,
                attempts: locking.attempts,
            })
        };
        if let Some(since) = tally.blocked_since {
            match blocked(since) {
                Some(refusal) => return Some(refusal),
                // The lock time passed: a fresh start.
                None => {
                    *tally = Tally {
                        epoch: locking.epoch,
                        ..Tally::default()
                    }
                }
            }
        }
        if password_ok {
            tallies.remove(&login.identity);
            return None;
        }
        tally.failures += 1;
        if tally.failures >= locking.attempts {
            tally.blocked_since = Some(now);
            return blocked(now);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::{Account, Identity};

    fn login(attempts: u32, lock_days: i32, epoch: u64) -> Login {
        let mut account = Account::new(&Identity::new("amy", "%"));
        account.locking = LoginLocking {
            attempts,
            lock_days,
            epoch,
        };
        account.login()
    }

    #[test]
    fn wrong_passwords_in_a_row_block_the_account_for_its_lock_time() {
        let logins = FailedLogins::default();
        let amy = login(3, 2, 0);
        let start = Instant::now();
        assert_eq!(logins.outcome_at(&amy, false, start), None);
        assert_eq!(
            logins.outcome_at(&amy, true, start),
            None,
            "a right one resets"
        );
        assert_eq!(logins.outcome_at(&amy, false, start), None);
        assert_eq!(logins.outcome_at(&amy, false, start), None);
        let blocked = logins
            .outcome_at(&amy, false, start)
            .expect("the third blocks");
        assert_eq!(blocked.remaining_days, Some(2));
        assert_eq!(
            blocked.message("amy", "10.0.0.1"),
            "Access denied for user 'amy'@'10.0.0.1'. Account is blocked for 2 day(s) \
             (2 day(s) remaining) due to 3 consecutive failed logins."
        );
        // Even the right password, until the days passed.
        let later = start + DAY + Duration::from_secs(60);
        assert_eq!(
            logins
                .outcome_at(&amy, true, later)
                .map(|b| b.remaining_days),
            Some(Some(1))
        );
        assert_eq!(logins.outcome_at(&amy, true, start + DAY * 2), None);
        assert_eq!(
            logins.outcome_at(&amy, false, start + DAY * 2),
            None,
            "counting anew"
        );
    }

    #[test]
    fn an_unlock_forgets_the_failures_and_untracked_accounts_are_never_blocked() {
        let logins = FailedLogins::default();
        let now = Instant::now();
        let forever = login(1, UNBOUNDED, 0);
        let blocked = logins.outcome_at(&forever, false, now).unwrap();
        assert_eq!(blocked.remaining_days, None);
        assert!(blocked
            .message("amy", "h")
            .contains("blocked for unlimited day(s)"));
        assert!(logins.outcome_at(&forever, true, now + DAY * 400).is_some());
        // ALTER USER … ACCOUNT UNLOCK gave the locking a new epoch.
        assert_eq!(logins.outcome_at(&login(1, UNBOUNDED, 1), true, now), None);

        let untracked = login(0, 3, 0);
        for _ in 0..10 {
            assert_eq!(logins.outcome_at(&untracked, false, now), None);
        }
        assert!(logins.tallies.lock().is_empty());
    }
}
