//! The sandbox clock: wall-clock time plus an offset that only moves
//! forward. Every time-driven rule reads it; authentication alone reads the
//! wall clock, so advancing never breaks signing.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Duration, DurationRound, Utc};

#[derive(Debug, Default)]
pub struct SandboxClock {
    offset_ms: AtomicI64,
}

impl SandboxClock {
    /// Sandbox time, truncated to milliseconds so every timestamp it
    /// produces prints the same way.
    pub fn now(&self) -> DateTime<Utc> {
        let t = Utc::now() + Duration::milliseconds(self.offset_ms.load(Ordering::SeqCst));
        t.duration_trunc(Duration::milliseconds(1)).unwrap_or(t)
    }

    /// The offset from the wall clock, for the data directory.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms.load(Ordering::SeqCst)
    }

    /// Sets the offset kept in the data directory, at a start.
    pub fn resume(&self, offset_ms: i64) {
        self.offset_ms.store(offset_ms, Ordering::SeqCst);
    }

    pub fn advance(&self, seconds: i64) {
        self.offset_ms
            .fetch_add(seconds.saturating_mul(1000), Ordering::SeqCst);
    }

    /// Moves the clock forward to `t` if it is behind it; never backwards.
    pub fn advance_to(&self, t: DateTime<Utc>) {
        let behind = (t - self.now()).num_milliseconds();
        if behind > 0 {
            self.offset_ms.fetch_add(behind, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_forward_only() {
        let clock = SandboxClock::default();
        let before = clock.now();
        clock.advance(3600);
        assert!(clock.now() - before >= Duration::seconds(3600));
        let later = clock.now();
        clock.advance_to(before);
        assert!(clock.now() >= later);
        clock.advance_to(later + Duration::seconds(10));
        assert!(clock.now() >= later + Duration::seconds(10));
    }
}
