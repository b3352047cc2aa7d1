//! On-chain withdrawals in the portal: a form that checks the address with
//! the service and shows the fee before confirming (`filing`), the gate's
//! kind that sends it exactly once under the reference fixed in the form
//! and follows it on chain until it settles (`action`), and the list and
//! page with the on-chain status live while pending (`routes`).

pub mod action;
pub mod filing;
pub mod routes;

/// A public block explorer's page for a transaction hash of `chain`.
pub fn explorer_url(chain: &str, tx_hash: &str) -> Option<String> {
    if tx_hash.is_empty() {
        return None;
    }
    let base = match chain {
        "avalanche" => "https://snowtrace.io/tx/",
        "base" => "https://basescan.org/tx/",
        "bitcoin" => "https://mempool.space/tx/",
        "bsc" => "https://bscscan.com/tx/",
        "ethereum" => "https://etherscan.io/tx/",
        "optimism" => "https://optimistic.etherscan.io/tx/",
        "polygon" => "https://polygonscan.com/tx/",
        "solana" => "https://solscan.io/tx/",
        "stellar" => "https://stellar.expert/explorer/public/tx/",
        "tron" => "https://tronscan.org/#/transaction/",
        _ => return None,
    };
    Some(format!("{base}{tx_hash}"))
}

/// Chains whose shared addresses tell recipients apart by a memo
/// (destination tag): the spec names Stellar; a withdrawal there needs one.
pub fn needs_memo(chain: &str) -> bool {
    chain == "stellar"
}

/// `0x1234…cdef`: enough of an address to recognise it in a list.
pub fn short_address(address: &str) -> String {
    let chars: Vec<char> = address.chars().collect();
    if chars.len() <= 14 {
        return address.to_owned();
    }
    let head: String = chars[..6].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explorer_links_only_for_known_chains_and_broadcast_hashes() {
        assert_eq!(
            explorer_url("ethereum", "0xabc").as_deref(),
            Some("https://etherscan.io/tx/0xabc")
        );
        assert_eq!(explorer_url("ethereum", ""), None);
        assert_eq!(explorer_url("narnia", "0xabc"), None);
    }

    #[test]
    fn long_addresses_are_shortened_for_lists() {
        assert_eq!(
            short_address("0x52908400098527886E0F7030069857D2E4169EE7"),
            "0x5290…9EE7"
        );
        assert_eq!(short_address("short"), "short");
    }
}
