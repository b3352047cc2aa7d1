//! Blockchain networks of the sandbox: their tokens, explorer links, and addresses.
//!
//! Addresses are generated and validated offline, by format and checksum only, so the sandbox
//! can hand out deposit addresses that real wallets would accept and reject typos the way a
//! live API would, without ever touching a node or holding a key.

use bech32::primitives::decode::{SegwitHrpstring, SegwitHrpstringError};
use rand::Rng;
use sha3::{Digest, Keccak256};

/// A blockchain network the API knows about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Chain {
    Avalanche,
    Base,
    Bitcoin,
    Bsc,
    Ethereum,
    Optimism,
    Polygon,
    Solana,
    Stellar,
    Tron,
}

/// The reason given for an address that is malformed for its chain.
const INVALID_ADDRESS: &str = "invalid address";
/// The reason given for a well-formed address whose checksum does not match, usually a typo.
const INVALID_CHECKSUM: &str = "invalid checksum";

/// The longest address any supported chain uses (the bech32 segwit limit); anything longer is
/// rejected before decoding, so huge inputs cost nothing.
const MAX_ADDRESS_LEN: usize = 90;

/// Stellar's strkey version byte for an account (ed25519 public key), which encodes to `G`.
const STELLAR_ACCOUNT_VERSION: u8 = 6 << 3;
/// Length of a Stellar account strkey: base32 of version + 32-byte key + 2-byte CRC.
const STELLAR_ADDRESS_LEN: usize = 56;
/// Tron's address prefix byte, which makes base58check addresses start with `T`.
const TRON_PREFIX: u8 = 0x41;
/// Base58check version bytes of Bitcoin P2PKH and P2SH addresses, mainnet and testnet.
const BITCOIN_BASE58_VERSIONS: [u8; 4] = [0x00, 0x05, 0x6f, 0xc4];

const STABLECOINS: &[(&str, u32)] = &[("USDT", 6), ("USDC", 6)];
/// Binance-peg stablecoins on BSC use 18 decimals rather than the usual 6.
const BSC_STABLECOINS: &[(&str, u32)] = &[("USDT", 18), ("USDC", 18)];

impl Chain {
    /// Every chain, in name order.
    pub const ALL: &'static [Chain] = &[
        Chain::Avalanche,
        Chain::Base,
        Chain::Bitcoin,
        Chain::Bsc,
        Chain::Ethereum,
        Chain::Optimism,
        Chain::Polygon,
        Chain::Solana,
        Chain::Stellar,
        Chain::Tron,
    ];

    /// Parses a network name as clients send it; case and surrounding whitespace are ignored.
    pub fn parse(name: &str) -> Option<Chain> {
        let name = name.trim();
        Chain::ALL
            .iter()
            .copied()
            .find(|chain| chain.name().eq_ignore_ascii_case(name))
    }

    /// The lowercase network name used in the API.
    pub fn name(self) -> &'static str {
        match self {
            Chain::Avalanche => "avalanche",
            Chain::Base => "base",
            Chain::Bitcoin => "bitcoin",
            Chain::Bsc => "bsc",
            Chain::Ethereum => "ethereum",
            Chain::Optimism => "optimism",
            Chain::Polygon => "polygon",
            Chain::Solana => "solana",
            Chain::Stellar => "stellar",
            Chain::Tron => "tron",
        }
    }

    /// Whether the API issues deposit addresses on this chain; BSC and Tron are withdrawal-only.
    pub fn can_generate(self) -> bool {
        !matches!(self, Chain::Bsc | Chain::Tron)
    }

    /// The chain's native token symbol and its decimals.
    pub fn native_token(self) -> (&'static str, u32) {
        match self {
            Chain::Avalanche => ("AVAX", 18),
            Chain::Base | Chain::Ethereum | Chain::Optimism => ("ETH", 18),
            Chain::Bitcoin => ("BTC", 8),
            Chain::Bsc => ("BNB", 18),
            Chain::Polygon => ("POL", 18),
            Chain::Solana => ("SOL", 9),
            Chain::Stellar => ("XLM", 7),
            Chain::Tron => ("TRX", 6),
        }
    }

    /// The stablecoins supported on the chain, with their decimals; Bitcoin has none.
    pub fn stablecoins(self) -> &'static [(&'static str, u32)] {
        match self {
            Chain::Bitcoin => &[],
            Chain::Bsc => BSC_STABLECOINS,
            _ => STABLECOINS,
        }
    }

    /// A public block explorer page for a transaction, so sandbox responses carry realistic links.
    pub fn explorer_tx_url(self, tx_hash: &str) -> String {
        let base = match self {
            Chain::Avalanche => "https://snowtrace.io/tx/",
            Chain::Base => "https://basescan.org/tx/",
            Chain::Bitcoin => "https://mempool.space/tx/",
            Chain::Bsc => "https://bscscan.com/tx/",
            Chain::Ethereum => "https://etherscan.io/tx/",
            Chain::Optimism => "https://optimistic.etherscan.io/tx/",
            Chain::Polygon => "https://polygonscan.com/tx/",
            Chain::Solana => "https://solscan.io/tx/",
            Chain::Stellar => "https://stellar.expert/explorer/public/tx/",
            Chain::Tron => "https://tronscan.org/#/transaction/",
        };
        format!("{base}{tx_hash}")
    }
}

/// A fresh random address of the chain, passing the chain's own checksum.
///
/// Works for every chain (refusing BSC and Tron is the caller's policy, not a format limit).
pub fn generate_address(chain: Chain, rng: &mut impl Rng) -> String {
    match chain {
        Chain::Bitcoin => bitcoin_p2wpkh(&random_bytes::<20>(rng)),
        Chain::Solana => bs58::encode(random_bytes::<32>(rng)).into_string(),
        Chain::Stellar => stellar_account(&random_bytes::<32>(rng)),
        Chain::Tron => tron_address(&random_bytes::<20>(rng)),
        Chain::Avalanche | Chain::Base | Chain::Bsc | Chain::Ethereum | Chain::Optimism | Chain::Polygon => {
            eip55(&hex::encode(random_bytes::<20>(rng)))
        }
    }
}

/// A random transaction hash in the chain's usual format.
pub fn random_tx_hash(chain: Chain, rng: &mut impl Rng) -> String {
    match chain {
        Chain::Solana => bs58::encode(random_bytes::<64>(rng)).into_string(),
        Chain::Bitcoin | Chain::Stellar | Chain::Tron => hex::encode(random_bytes::<32>(rng)),
        Chain::Avalanche | Chain::Base | Chain::Bsc | Chain::Ethereum | Chain::Optimism | Chain::Polygon => {
            format!("0x{}", hex::encode(random_bytes::<32>(rng)))
        }
    }
}

/// Ok when `address` is a valid address of `chain`, else a short lowercase reason.
pub fn validate_address(chain: Chain, address: &str) -> Result<(), &'static str> {
    if address.is_empty() || address.len() > MAX_ADDRESS_LEN {
        return Err(INVALID_ADDRESS);
    }
    match chain {
        Chain::Bitcoin => validate_bitcoin(address),
        Chain::Solana => validate_solana(address),
        Chain::Stellar => validate_stellar(address),
        Chain::Tron => validate_tron(address),
        Chain::Avalanche | Chain::Base | Chain::Bsc | Chain::Ethereum | Chain::Optimism | Chain::Polygon => {
            validate_evm(address)
        }
    }
}

fn random_bytes<const N: usize>(rng: &mut impl Rng) -> [u8; N] {
    let mut bytes = [0u8; N];
    rng.fill(&mut bytes[..]);
    bytes
}

/// EIP-55: uppercase each hex letter whose nibble in keccak256(lowercase hex) is 8 or more.
fn eip55(lower_hex: &str) -> String {
    let hash = Keccak256::digest(lower_hex.as_bytes());
    let checksummed: String = lower_hex
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let nibble = if i % 2 == 0 {
                hash[i / 2] >> 4
            } else {
                hash[i / 2] & 0x0f
            };
            if nibble >= 8 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    format!("0x{checksummed}")
}

/// Accepts `0x` + 40 hex digits; mixed case must be a correct EIP-55 checksum, while
/// single-case addresses carry no checksum and are accepted as is.
fn validate_evm(address: &str) -> Result<(), &'static str> {
    let digits = address.strip_prefix("0x").ok_or(INVALID_ADDRESS)?;
    if digits.len() != 40 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(INVALID_ADDRESS);
    }
    let has_lower = digits.bytes().any(|b| b.is_ascii_lowercase());
    let has_upper = digits.bytes().any(|b| b.is_ascii_uppercase());
    if has_lower && has_upper && eip55(&digits.to_ascii_lowercase()) != address {
        return Err(INVALID_CHECKSUM);
    }
    Ok(())
}

/// A native segwit v0 pay-to-witness-pubkey-hash address (`bc1q…`).
fn bitcoin_p2wpkh(pubkey_hash: &[u8; 20]) -> String {
    bech32::segwit::encode_v0(bech32::hrp::BC, pubkey_hash)
        .expect("a 20-byte witness program is always a valid segwit v0 program")
}

fn validate_bitcoin(address: &str) -> Result<(), &'static str> {
    let prefix = address.get(..3).map(str::to_ascii_lowercase);
    if matches!(prefix.as_deref(), Some("bc1" | "tb1")) {
        validate_segwit(address)
    } else {
        validate_bitcoin_base58(address)
    }
}

/// Segwit addresses: bech32 for v0 and bech32m for v1+ (BIP-173/BIP-350), mainnet or testnet.
fn validate_segwit(address: &str) -> Result<(), &'static str> {
    match SegwitHrpstring::new(address) {
        Ok(segwit) if segwit.hrp().is_valid_on_mainnet() || segwit.hrp().is_valid_on_testnet() => Ok(()),
        Ok(_) => Err(INVALID_ADDRESS),
        Err(SegwitHrpstringError::Checksum(_)) => Err(INVALID_CHECKSUM),
        Err(_) => Err(INVALID_ADDRESS),
    }
}

/// Legacy P2PKH (`1…`, `m…`/`n…`) and P2SH (`3…`, `2…`) addresses.
fn validate_bitcoin_base58(address: &str) -> Result<(), &'static str> {
    match decode_base58check(address)?.as_slice() {
        [version, hash @ ..] if BITCOIN_BASE58_VERSIONS.contains(version) && hash.len() == 20 => Ok(()),
        _ => Err(INVALID_ADDRESS),
    }
}

/// A Tron address: base58check of the `0x41` prefix and a 20-byte account hash.
fn tron_address(account_hash: &[u8; 20]) -> String {
    let mut payload = Vec::with_capacity(21);
    payload.push(TRON_PREFIX);
    payload.extend_from_slice(account_hash);
    bs58::encode(payload).with_check().into_string()
}

fn validate_tron(address: &str) -> Result<(), &'static str> {
    match decode_base58check(address)?.as_slice() {
        [TRON_PREFIX, hash @ ..] if hash.len() == 20 => Ok(()),
        _ => Err(INVALID_ADDRESS),
    }
}

/// Decodes base58check, returning the payload (version byte included, checksum removed).
fn decode_base58check(address: &str) -> Result<Vec<u8>, &'static str> {
    bs58::decode(address)
        .with_check(None)
        .into_vec()
        .map_err(|err| match err {
            bs58::decode::Error::InvalidChecksum { .. } => INVALID_CHECKSUM,
            _ => INVALID_ADDRESS,
        })
}

/// Solana addresses are bare base58 ed25519 keys with no checksum, so only the length is checked.
fn validate_solana(address: &str) -> Result<(), &'static str> {
    match bs58::decode(address).into_vec() {
        Ok(key) if key.len() == 32 => Ok(()),
        _ => Err(INVALID_ADDRESS),
    }
}

/// A Stellar account strkey (`G…`): base32 of version byte, key and CRC16 (little-endian).
fn stellar_account(key: &[u8; 32]) -> String {
    let mut data = Vec::with_capacity(35);
    data.push(STELLAR_ACCOUNT_VERSION);
    data.extend_from_slice(key);
    let crc = crc16_xmodem(&data);
    data.extend_from_slice(&crc.to_le_bytes());
    base32_encode(&data)
}

fn validate_stellar(address: &str) -> Result<(), &'static str> {
    if address.len() != STELLAR_ADDRESS_LEN {
        return Err(INVALID_ADDRESS);
    }
    let data = base32_decode(address).ok_or(INVALID_ADDRESS)?;
    let (body, crc) = data.split_at(data.len() - 2);
    if body.first() != Some(&STELLAR_ACCOUNT_VERSION) {
        return Err(INVALID_ADDRESS);
    }
    if crc16_xmodem(body).to_le_bytes() != crc {
        return Err(INVALID_CHECKSUM);
    }
    Ok(())
}

/// RFC 4648 base32 alphabet, as used by Stellar strkeys.
const BASE32_ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// Unpadded RFC 4648 base32.
fn base32_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    let mut buffer = 0u32;
    let mut bits = 0;
    for &byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(BASE32_ALPHABET[(buffer >> bits) as usize & 31]));
        }
        buffer &= (1 << bits) - 1;
    }
    if bits > 0 {
        out.push(char::from(BASE32_ALPHABET[(buffer << (5 - bits)) as usize & 31]));
    }
    out
}

/// Decodes unpadded uppercase base32; None on a foreign character or non-canonical trailing bits.
fn base32_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 5 / 8);
    let mut buffer = 0u32;
    let mut bits = 0;
    for c in text.bytes() {
        let value = BASE32_ALPHABET.iter().position(|&a| a == c)?;
        buffer = (buffer << 5) | value as u32;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    (bits < 5 && buffer == 0).then_some(out)
}

/// CRC16-XModem (polynomial 0x1021, initial value 0), the strkey checksum.
fn crc16_xmodem(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &byte in bytes {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests;
