//! Fields the provider's official command-line client reads under other
//! names than the spec's (sandbox-rules.md, "Working with the provider's
//! official command-line client"), added beside the spec's fields as an
//! answer is written. Records keep one set of names (nothing to keep in
//! step when a card's balance moves), and a name the record already has
//! is never overwritten, so nothing the spec shows changes.

use serde::ser::Error as _;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// `value` answered with `add` applied to its JSON form.
pub struct Beside<T> {
    value: T,
    add: fn(&mut Value),
}

impl<T: Serialize> Serialize for Beside<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut json = serde_json::to_value(&self.value).map_err(S::Error::custom)?;
        (self.add)(&mut json);
        json.serialize(serializer)
    }
}

/// Copies `from` to `to` in `object`, unless `to` is there already.
fn copy(object: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(value) = object.get(from).cloned() {
        object.entry(to).or_insert(value);
    }
}

/// A card record: `last_four`, `currency` and `balance` beside
/// `last_four_digit`, `balance_currency` and `balance_amount`.
fn card(value: &mut Value) {
    if let Some(card) = value.as_object_mut() {
        copy(card, "last_four_digit", "last_four");
        copy(card, "balance_currency", "currency");
        copy(card, "balance_amount", "balance");
    }
}

/// `data` of one card (`{card}`).
pub fn card_data<T: Serialize>(data: T) -> Beside<T> {
    Beside {
        value: data,
        add: |data| card(&mut data["card"]),
    }
}

/// `data` of a card list (`{cards, page_info}`): each card, and `total`
/// beside `page_info.total`.
pub fn card_page<T: Serialize>(data: T) -> Beside<T> {
    Beside {
        value: data,
        add: |data| {
            if let Some(cards) = data["cards"].as_array_mut() {
                cards.iter_mut().for_each(card);
            }
            let total = data["page_info"]["total"].clone();
            if let Some(page) = data.as_object_mut() {
                page.entry("total").or_insert(total);
            }
        },
    }
}

/// `data` of the supported chains: `nativeToken` beside `native_token`.
pub fn supported_chains<T: Serialize>(data: T) -> Beside<T> {
    Beside {
        value: data,
        add: |data| {
            for chain in data["chains"].as_array_mut().into_iter().flatten() {
                if let Some(chain) = chain.as_object_mut() {
                    copy(chain, "native_token", "nativeToken");
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_added_beside_never_over() {
        let data = json!({"cards": [{"last_four_digit": "4242", "balance_currency": "USD",
            "balance_amount": "5000000", "currency": "kept"}], "page_info": {"total": 1}});
        let answered = serde_json::to_value(card_page(data)).unwrap();
        assert_eq!(
            answered["cards"][0],
            json!({"last_four_digit": "4242", "last_four": "4242", "balance_currency": "USD",
                "currency": "kept", "balance_amount": "5000000", "balance": "5000000"})
        );
        assert_eq!(answered["total"], 1);
        let chains = json!({"chains": [{"chain": "bitcoin", "native_token": {"symbol": "BTC"}}]});
        let answered = serde_json::to_value(supported_chains(chains)).unwrap();
        assert_eq!(answered["chains"][0]["nativeToken"]["symbol"], "BTC");
    }
}
