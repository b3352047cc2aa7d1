//! Notices that survive a redirect (post, then redirect): the page a change
//! redirects to says once what the change did. actix-web-flash-messages
//! carries them through the request; this store keeps them in a signed
//! cookie. Its own cookie store always marks the cookie `Secure`, which a
//! portal served over plain HTTP on 127.0.0.1 can't use, and clears it on
//! every response; this one is `Secure` when the portal's cookies are and is
//! cleared only by the response to a request that carried it.

use actix_web::cookie::{time, Cookie, CookieJar, Key, SameSite};
use actix_web::dev::ResponseHead;
use actix_web::http::header::{HeaderValue, SET_COOKIE};
use actix_web::HttpRequest;
use actix_web_flash_messages::storage::{FlashMessageStore, LoadError, StoreError};
use actix_web_flash_messages::{FlashMessage, FlashMessagesFramework, Level};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

const COOKIE: &str = "paydesk_notice";

/// The middleware, with a key derived from the master key so every
/// replica reads what another wrote.
pub fn framework(key: Key, secure: bool) -> FlashMessagesFramework {
    FlashMessagesFramework::builder(NoticeStore { key, secure })
        .minimum_level(Level::Info)
        .build()
}

struct NoticeStore {
    key: Key,
    secure: bool,
}

impl FlashMessageStore for NoticeStore {
    fn load(&self, request: &HttpRequest) -> Result<Vec<FlashMessage>, LoadError> {
        let Some(cookie) = request.cookie(COOKIE) else {
            return Ok(Vec::new());
        };
        let mut jar = CookieJar::new();
        jar.add_original(cookie);
        // Altered, or signed under another key: nothing to show.
        let Some(verified) = jar.signed(&self.key).get(COOKIE) else {
            return Ok(Vec::new());
        };
        URL_SAFE_NO_PAD
            .decode(verified.value())
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or_else(|| LoadError::DeserializationError(anyhow::anyhow!("unreadable notice cookie")))
    }

    fn store(
        &self,
        messages: &[FlashMessage],
        request: HttpRequest,
        response: &mut ResponseHead,
    ) -> Result<(), StoreError> {
        let cookie = if !messages.is_empty() {
            let json = serde_json::to_vec(messages).map_err(|e| StoreError::SerializationError(e.into()))?;
            let mut jar = CookieJar::new();
            jar.signed_mut(&self.key)
                .add(Cookie::new(COOKIE, URL_SAFE_NO_PAD.encode(json)));
            let mut cookie = jar
                .get(COOKIE)
                .cloned()
                .expect("the jar holds what was just added");
            cookie.set_path("/");
            cookie.set_http_only(true);
            cookie.set_secure(self.secure);
            cookie.set_same_site(SameSite::Lax);
            cookie
        } else if request.cookie(COOKIE).is_some() {
            let mut removal = Cookie::new(COOKIE, "");
            removal.set_path("/");
            removal.set_max_age(time::Duration::ZERO);
            removal
        } else {
            return Ok(());
        };
        let value =
            HeaderValue::from_str(&cookie.to_string()).map_err(|e| StoreError::GenericError(e.into()))?;
        response.headers_mut().append(SET_COOKIE, value);
        Ok(())
    }
}
