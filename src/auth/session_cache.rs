//! Sessions and memberships kept in memory between a session's touches,
//! so a page costs no statement while nothing about its user changed.
//!
//! Postgres stays the truth. An entry is served only while
//! - this replica hears the `paydesk_access` channel, which triggers on the
//!   session, user, membership, role, permission, tenant and connection
//!   tables announce every change on (a change made through another replica
//!   is heard within the time a notification takes, a few milliseconds);
//! - no unsafe request has finished on this replica since it was loaded
//!   (the middleware forgets everything after each one, so a sign-out or a
//!   role change made here holds for the very next request);
//! - the session needs no touch of `last_seen_at` yet and has not reached
//!   its absolute end (the load says how long that is).
//!
//! A load that began before a forgetting is not kept: each forgetting
//! starts a new generation and an entry is only kept in the generation it
//! was loaded in.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::postgres::PgListener;
use sqlx::PgPool;

use super::session::SignedIn;
use crate::access::store::Membership;

/// The channel the triggers of migration `access_notify` announce on.
const CHANNEL: &str = "paydesk_access";
/// Entries beyond this are a sign of many short sessions: drop the stale.
const MAX_ENTRIES: usize = 20_000;
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// What a session load gives, as kept.
#[derive(Clone)]
pub struct Loaded {
    pub signed_in: SignedIn,
    pub membership: Option<Membership>,
}

struct Entry {
    loaded: Loaded,
    fresh_until: Instant,
}

#[derive(Default)]
pub struct SessionCache {
    entries: Mutex<HashMap<Vec<u8>, Entry>>,
    generation: AtomicU64,
    hearing: AtomicBool,
}

impl SessionCache {
    /// The generation a load starts in; pass it to [`Self::keep`].
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The kept load of a session, while it is fresh and changes are heard.
    pub fn get(&self, token_hash: &[u8]) -> Option<Loaded> {
        if !self.is_hearing() {
            return None;
        }
        let entries = self.entries.lock().expect("the session cache lock");
        let entry = entries.get(token_hash)?;
        (entry.fresh_until > Instant::now()).then(|| entry.loaded.clone())
    }

    /// Keeps a load made in `generation` for `fresh_for`, unless something
    /// was forgotten since it began.
    pub fn keep(&self, generation: u64, token_hash: Vec<u8>, loaded: Loaded, fresh_for: Duration) {
        if !self.is_hearing() || fresh_for.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut entries = self.entries.lock().expect("the session cache lock");
        // Checked under the lock, which `forget` also takes: no entry of an
        // older generation survives a forgetting.
        if self.generation.load(Ordering::Acquire) != generation {
            return;
        }
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, e| e.fresh_until > now);
        }
        if entries.len() < MAX_ENTRIES {
            entries.insert(
                token_hash,
                Entry {
                    loaded,
                    fresh_until: now + fresh_for,
                },
            );
        }
    }

    /// Forgets every entry; loads under way are not kept.
    pub fn forget(&self) {
        let mut entries = self.entries.lock().expect("the session cache lock");
        self.generation.fetch_add(1, Ordering::AcqRel);
        entries.clear();
    }

    /// Whether changes are heard, so entries are kept.
    pub fn is_hearing(&self) -> bool {
        self.hearing.load(Ordering::Acquire)
    }

    fn set_hearing(&self, yes: bool) {
        self.forget();
        self.hearing.store(yes, Ordering::Release);
    }

    /// Listens for changes for as long as the process runs; the cache is
    /// off whenever the listening connection is down.
    pub fn start_hearing(cache: std::sync::Arc<Self>, pool: PgPool) {
        tokio::spawn(async move {
            loop {
                if let Err(e) = cache.hear(&pool).await {
                    tracing::warn!(error = %e, "the session cache stopped hearing changes; listening again");
                }
                cache.set_hearing(false);
                tokio::time::sleep(RETRY_AFTER).await;
            }
        });
    }

    async fn hear(&self, pool: &PgPool) -> Result<(), sqlx::Error> {
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen(CHANNEL).await?;
        self.set_hearing(true);
        // None: the connection dropped, and changes meanwhile were not heard.
        while listener.try_recv().await?.is_some() {
            self.forget();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn loaded() -> Loaded {
        Loaded {
            signed_in: SignedIn {
                token_hash: vec![1],
                user_id: Uuid::nil(),
                email: "a@example.com".into(),
                display_name: "A".into(),
                is_platform_admin: false,
                must_change_password: false,
                csrf_token: "c".into(),
                active_tenant_id: None,
                ip: String::new(),
                user_agent: String::new(),
                two_factor: false,
                verified_at: None,
                tenant_requires_two_factor: false,
                notices: Vec::new(),
            },
            membership: None,
        }
    }

    #[test]
    fn nothing_is_kept_unless_changes_are_heard() {
        let cache = SessionCache::default();
        cache.keep(cache.generation(), vec![1], loaded(), Duration::from_secs(60));
        assert!(cache.get(&[1]).is_none());
        cache.set_hearing(true);
        cache.keep(cache.generation(), vec![1], loaded(), Duration::from_secs(60));
        assert!(cache.get(&[1]).is_some());
        cache.set_hearing(false);
        assert!(cache.get(&[1]).is_none());
    }

    #[test]
    fn a_load_that_began_before_a_forgetting_is_not_kept() {
        let cache = SessionCache::default();
        cache.set_hearing(true);
        let began = cache.generation();
        cache.forget();
        cache.keep(began, vec![1], loaded(), Duration::from_secs(60));
        assert!(cache.get(&[1]).is_none());
        cache.keep(cache.generation(), vec![1], loaded(), Duration::from_secs(60));
        assert!(cache.get(&[1]).is_some());
        cache.forget();
        assert!(cache.get(&[1]).is_none());
    }

    #[test]
    fn a_session_due_for_a_touch_is_not_kept() {
        let cache = SessionCache::default();
        cache.set_hearing(true);
        cache.keep(cache.generation(), vec![1], loaded(), Duration::ZERO);
        assert!(cache.get(&[1]).is_none());
    }
}
