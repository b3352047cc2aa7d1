//! Market prices: the model in `prices.rs` (kept free of the state, which
//! holds the one market), and its handlers here.

pub mod prices;

use actix_web::http::StatusCode;
use actix_web::web::Data;
use paydesk_api::models::trading::{PriceList, SetPrice};

use crate::error::ApiError;
use crate::respond::{envelope, Caller, JsonAnswer, JsonBody};
use crate::state::Shared;

pub use prices::{spread, Market};

/// `GET /api/trading/prices`.
pub async fn list(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let prices = shared.store().market.list();
    Ok(envelope(
        StatusCode::OK,
        "Prices retrieved",
        PriceList { prices },
        &caller.request_id,
        now,
    ))
}

/// `PUT /sandbox/prices {base, quote, price, liquidity?}`.
pub async fn set(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<SetPrice>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let price = {
        let mut store = shared.store();
        let price = store.market.set(&body.value, now)?;
        super::trading::prices_moved(&mut store, now);
        price
    };
    Ok(envelope(
        StatusCode::OK,
        "Price set",
        price,
        &caller.request_id,
        now,
    ))
}
