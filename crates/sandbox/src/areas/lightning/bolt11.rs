//! BOLT11 through the `lightning-invoice` crate: the sandbox's signet
//! invoices are signed by its node key, and any network's invoice decodes.

use std::str::FromStr;
use std::time::Duration;

use bitcoin::hashes::{sha256, Hash};
use bitcoin::secp256k1::{PublicKey, Secp256k1, SecretKey};
use lightning_invoice::{
    Bolt11Invoice, Bolt11InvoiceDescriptionRef, Currency, InvoiceBuilder, PaymentSecret,
};
use rand::RngCore;

/// The sandbox's Lightning node: the key that signs its invoices.
pub struct NodeKey {
    secret: SecretKey,
    pub public: PublicKey,
}

impl std::fmt::Debug for NodeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl NodeKey {
    pub fn generate() -> Self {
        let secp = Secp256k1::new();
        let mut bytes = [0u8; 32];
        loop {
            rand::thread_rng().fill_bytes(&mut bytes);
            if let Ok(secret) = SecretKey::from_slice(&bytes) {
                return NodeKey {
                    public: PublicKey::from_secret_key(&secp, &secret),
                    secret,
                };
            }
        }
    }

    /// The secret key, hex, for the data directory.
    pub fn secret_hex(&self) -> String {
        hex::encode(self.secret.secret_bytes())
    }

    pub fn from_secret_hex(text: &str) -> Option<Self> {
        let bytes = hex::decode(text).ok()?;
        let secret = SecretKey::from_slice(&bytes).ok()?;
        Some(NodeKey {
            public: PublicKey::from_secret_key(&Secp256k1::new(), &secret),
            secret,
        })
    }

    pub fn id(&self) -> String {
        self.public.to_string()
    }

    /// A signet invoice; returns the BOLT11 string and the payment hash.
    pub fn sign(
        &self,
        preimage: &[u8; 32],
        amount_msat: u64,
        description: &str,
        timestamp_secs: u64,
        expiry_secs: u64,
    ) -> Result<(String, String), String> {
        let secp = Secp256k1::new();
        let hash = sha256::Hash::hash(preimage);
        let mut secret = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut secret);
        let invoice = InvoiceBuilder::new(Currency::Signet)
            .description(description.to_owned())
            .payment_hash(hash)
            .payment_secret(PaymentSecret(secret))
            .amount_milli_satoshis(amount_msat)
            .duration_since_epoch(Duration::from_secs(timestamp_secs))
            .expiry_time(Duration::from_secs(expiry_secs))
            .min_final_cltv_expiry_delta(144)
            .build_signed(|m| secp.sign_ecdsa_recoverable(m, &self.secret))
            .map_err(|e| e.to_string())?;
        Ok((invoice.to_string(), hash.to_string()))
    }
}

/// sha256 of a preimage, hex.
pub fn payment_hash(preimage: &[u8; 32]) -> String {
    sha256::Hash::hash(preimage).to_string()
}

/// What a BOLT11 string says.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub payment_hash: String,
    pub payee: String,
    pub amount_msat: u64,
    pub description: String,
    pub timestamp: i64,
    pub expires_at: i64,
    pub network: &'static str,
}

/// Decodes and checks the signature of any network's invoice.
pub fn decode(request: &str) -> Result<Decoded, String> {
    let text = request.trim();
    let text = text
        .strip_prefix("lightning:")
        .or_else(|| text.strip_prefix("LIGHTNING:"))
        .unwrap_or(text);
    let invoice = Bolt11Invoice::from_str(text).map_err(|e| e.to_string())?;
    let description = match invoice.description() {
        Bolt11InvoiceDescriptionRef::Direct(d) => d.as_inner().0.clone(),
        Bolt11InvoiceDescriptionRef::Hash(h) => format!("sha256:{}", h.0),
    };
    let timestamp = invoice.duration_since_epoch().as_secs() as i64;
    Ok(Decoded {
        payment_hash: invoice.payment_hash().to_string(),
        payee: invoice.get_payee_pub_key().to_string(),
        amount_msat: invoice.amount_milli_satoshis().unwrap_or(0),
        description,
        timestamp,
        expires_at: timestamp + invoice.expiry_time().as_secs() as i64,
        network: match invoice.currency() {
            Currency::Bitcoin => "bitcoin",
            Currency::BitcoinTestnet => "testnet",
            Currency::Signet => "signet",
            Currency::Regtest => "regtest",
            Currency::Simnet => "simnet",
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BOLT11's own test vectors (lightning/bolts, 11-payment-encoding.md).
    const SPEC_DONATION: &str = "lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlqnls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql";
    const SPEC_COFFEE: &str = "lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu9qrsgquk0rl77nj30yxdy8j9vdx85fkpmdla2087ne0xh8nhedh8w27kyke0lp53ut353s06fv3qfegext0eh0ymjpf39tuven09sam30g4vgpfna3rh";
    const SPEC_PAYEE: &str = "03e7156ae33b0a208d0744199163177e909e80176e55d97a2f221ede0f934dd9ad";
    const SPEC_HASH: &str = "0001020304050607080900010203040506070809000102030405060708090102";

    #[test]
    fn the_specifications_vectors_decode_to_their_published_values() {
        let d = decode(SPEC_DONATION).unwrap();
        assert_eq!(
            (d.payee.as_str(), d.payment_hash.as_str()),
            (SPEC_PAYEE, SPEC_HASH)
        );
        assert_eq!(
            (d.amount_msat, d.timestamp, d.network),
            (0, 1_496_314_658, "bitcoin")
        );
        assert_eq!(d.description, "Please consider supporting this project");
        assert_eq!(d.expires_at, 1_496_314_658 + 3600);
        let c = decode(SPEC_COFFEE).unwrap();
        assert_eq!(
            (c.amount_msat, c.description.as_str()),
            (250_000_000, "1 cup coffee")
        );
        assert_eq!(c.expires_at, 1_496_314_658 + 60);
        // One character changed breaks the checksum.
        assert!(decode(&SPEC_COFFEE.replace("xysxx", "xysxy")).is_err());
        assert!(decode("lnbc1nothing").is_err());
    }

    #[test]
    fn our_invoices_are_signet_signed_by_the_node_and_hash_the_preimage() {
        let node = NodeKey::generate();
        let preimage = [7u8; 32];
        let (request, hash) = node
            .sign(&preimage, 21_000, "coffee", 1_800_000_000, 600)
            .unwrap();
        assert!(request.starts_with("lntbs210n1"), "{request}");
        let d = decode(&request).unwrap();
        assert_eq!((d.payee, d.payment_hash.clone()), (node.id(), hash));
        assert_eq!(d.payment_hash, payment_hash(&preimage));
        assert_eq!(
            (d.amount_msat, d.network, d.expires_at),
            (21_000, "signet", 1_800_000_600)
        );
    }
}
