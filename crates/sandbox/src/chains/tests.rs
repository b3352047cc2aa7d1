use super::*;
use rand::rngs::StdRng;
use rand::SeedableRng;

const EIP55_VECTORS: [&str; 4] = [
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
];
const EVM_CHAINS: [Chain; 6] = [
    Chain::Avalanche,
    Chain::Base,
    Chain::Bsc,
    Chain::Ethereum,
    Chain::Optimism,
    Chain::Polygon,
];
const BASE58_ALPHABET: &str = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BECH32_ALPHABET: &str = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const STELLAR_EXAMPLE: &str = "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7";
const TRON_USDT: &str = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";

fn rng() -> StdRng {
    StdRng::seed_from_u64(0x5eed)
}

/// Every string made from `s` by replacing one character with another from `alphabet`.
fn one_char_changes<'a>(s: &'a str, alphabet: &'a str) -> impl Iterator<Item = String> + 'a {
    s.char_indices().flat_map(move |(i, original)| {
        alphabet.chars().filter(move |&c| c != original).map(move |c| {
            let mut changed = s.to_string();
            changed.replace_range(i..i + original.len_utf8(), c.encode_utf8(&mut [0; 4]));
            changed
        })
    })
}

fn assert_all_invalid(chain: Chain, addresses: impl Iterator<Item = String>) {
    for address in addresses {
        assert!(
            validate_address(chain, &address).is_err(),
            "{address} accepted on {chain:?}"
        );
    }
}

#[test]
fn parse_accepts_names_in_any_case() {
    for &chain in Chain::ALL {
        assert_eq!(Chain::parse(chain.name()), Some(chain));
        assert_eq!(
            Chain::parse(&format!(" {} ", chain.name().to_uppercase())),
            Some(chain)
        );
    }
    assert_eq!(Chain::parse("Ethereum"), Some(Chain::Ethereum));
    assert_eq!(Chain::parse("eth"), None);
    assert_eq!(Chain::parse(""), None);
    assert_eq!(Chain::parse("ｂｓｃ"), None);
}

#[test]
fn all_lists_every_chain_once_in_order() {
    assert_eq!(Chain::ALL.len(), 10);
    assert!(Chain::ALL.windows(2).all(|pair| pair[0] < pair[1]));
    assert!(Chain::ALL.windows(2).all(|pair| pair[0].name() < pair[1].name()));
}

#[test]
fn only_bsc_and_tron_cannot_generate() {
    let refused: Vec<Chain> = Chain::ALL.iter().copied().filter(|c| !c.can_generate()).collect();
    assert_eq!(refused, [Chain::Bsc, Chain::Tron]);
}

#[test]
fn native_tokens() {
    let expected = [
        ("AVAX", 18),
        ("ETH", 18),
        ("BTC", 8),
        ("BNB", 18),
        ("ETH", 18),
        ("ETH", 18),
        ("POL", 18),
        ("SOL", 9),
        ("XLM", 7),
        ("TRX", 6),
    ];
    let actual: Vec<_> = Chain::ALL.iter().map(|c| c.native_token()).collect();
    assert_eq!(actual, expected);
}

#[test]
fn stablecoins() {
    for &chain in Chain::ALL {
        let expected: &[(&str, u32)] = match chain {
            Chain::Bitcoin => &[],
            Chain::Bsc => &[("USDT", 18), ("USDC", 18)],
            _ => &[("USDT", 6), ("USDC", 6)],
        };
        assert_eq!(chain.stablecoins(), expected, "{chain:?}");
    }
}

#[test]
fn explorer_urls_are_https_and_end_with_the_hash() {
    let mut rng = rng();
    for &chain in Chain::ALL {
        let hash = random_tx_hash(chain, &mut rng);
        let url = chain.explorer_tx_url(&hash);
        assert!(url.starts_with("https://"), "{url}");
        assert!(url.ends_with(&hash), "{url}");
    }
    assert_eq!(
        Chain::Ethereum.explorer_tx_url("0xab"),
        "https://etherscan.io/tx/0xab"
    );
}

#[test]
fn tx_hashes_have_each_chain_format() {
    let mut rng = rng();
    for &chain in Chain::ALL {
        let hash = random_tx_hash(chain, &mut rng);
        match chain {
            Chain::Solana => assert_eq!(bs58::decode(&hash).into_vec().map(|b| b.len()), Ok(64)),
            _ if EVM_CHAINS.contains(&chain) => {
                let digits = hash.strip_prefix("0x").expect("EVM hashes start with 0x");
                assert_eq!(hex::decode(digits).map(|b| b.len()), Ok(32));
                assert_eq!(digits, digits.to_lowercase());
            }
            _ => {
                assert_eq!(hex::decode(&hash).map(|b| b.len()), Ok(32));
                assert_eq!(hash, hash.to_lowercase());
            }
        }
    }
}

#[test]
fn eip55_vectors_are_valid_and_reproduced() {
    for address in EIP55_VECTORS {
        assert_eq!(eip55(&address[2..].to_lowercase()), address);
        for chain in EVM_CHAINS {
            assert_eq!(validate_address(chain, address), Ok(()));
        }
    }
}

#[test]
fn evm_single_case_addresses_carry_no_checksum() {
    for address in EIP55_VECTORS {
        let digits = &address[2..];
        assert_eq!(
            validate_address(Chain::Ethereum, &format!("0x{}", digits.to_lowercase())),
            Ok(())
        );
        assert_eq!(
            validate_address(Chain::Ethereum, &format!("0x{}", digits.to_uppercase())),
            Ok(())
        );
    }
}

#[test]
fn evm_one_changed_character_is_invalid() {
    let address = EIP55_VECTORS[0];
    // Flipping the case of any one letter always breaks the checksum.
    for (i, c) in address
        .char_indices()
        .skip(2)
        .filter(|(_, c)| c.is_ascii_alphabetic())
    {
        let flipped = if c.is_ascii_uppercase() {
            c.to_ascii_lowercase()
        } else {
            c.to_ascii_uppercase()
        };
        let mut changed = address.to_string();
        changed.replace_range(i..=i, &flipped.to_string());
        assert_eq!(
            validate_address(Chain::Ethereum, &changed),
            Err(INVALID_CHECKSUM),
            "{changed}"
        );
    }
    // So does changing a digit of each published vector.
    for address in EIP55_VECTORS {
        let changed = format!("0x{}", address[2..].replacen('0', "1", 1));
        assert_eq!(
            validate_address(Chain::Ethereum, &changed),
            Err(INVALID_CHECKSUM),
            "{changed}"
        );
    }
}

#[test]
fn evm_malformed_addresses_are_invalid() {
    let address = EIP55_VECTORS[0];
    for bad in [
        &address[2..],
        &address[..41],
        &format!("{address}0"),
        &format!("0X{}", &address[2..]),
        &address.replacen('a', "g", 1),
        "0x",
    ] {
        assert_eq!(
            validate_address(Chain::Ethereum, bad),
            Err(INVALID_ADDRESS),
            "{bad}"
        );
    }
}

#[test]
fn bitcoin_segwit_vectors() {
    for valid in [
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
        "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4",
        "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
        "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
        "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
    ] {
        assert_eq!(validate_address(Chain::Bitcoin, valid), Ok(()), "{valid}");
    }
    for invalid in [
        // BIP-173
        "tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty",
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5",
        "BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2",
        "bc1rw5uspcuh",
        "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P",
        "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7",
        "bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du",
        "bc1gmk9yu",
        // BIP-350
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh",
        "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4",
        "bc1pw5dgrnzv",
        "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq",
        "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j",
    ] {
        assert!(validate_address(Chain::Bitcoin, invalid).is_err(), "{invalid}");
    }
    assert_eq!(
        validate_address(Chain::Bitcoin, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5"),
        Err(INVALID_CHECKSUM)
    );
}

#[test]
fn bitcoin_segwit_one_changed_character_is_invalid() {
    let address = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4";
    assert_all_invalid(Chain::Bitcoin, one_char_changes(address, BECH32_ALPHABET));
}

#[test]
fn bitcoin_p2wpkh_matches_bip173() {
    let hash: [u8; 20] = hex::decode("751e76e8199196d454941c45d1b3a323f1433bd6")
        .expect("valid hex")
        .try_into()
        .expect("20 bytes");
    assert_eq!(
        bitcoin_p2wpkh(&hash),
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
    );
}

#[test]
fn bitcoin_base58_addresses() {
    for valid in [
        "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
        "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
    ] {
        assert_eq!(validate_address(Chain::Bitcoin, valid), Ok(()), "{valid}");
        assert_all_invalid(Chain::Bitcoin, one_char_changes(valid, BASE58_ALPHABET));
    }
    assert_eq!(
        validate_address(Chain::Bitcoin, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb"),
        Err(INVALID_CHECKSUM)
    );
    for (version, accepted) in [(0x6f, true), (0xc4, true), (0x41, false), (0x01, false)] {
        let mut payload = vec![version];
        payload.extend_from_slice(&[7; 20]);
        let address = bs58::encode(&payload).with_check().into_string();
        assert_eq!(
            validate_address(Chain::Bitcoin, &address).is_ok(),
            accepted,
            "{address}"
        );
    }
    assert_eq!(validate_address(Chain::Bitcoin, TRON_USDT), Err(INVALID_ADDRESS));
}

#[test]
fn solana_addresses() {
    for valid in [
        "11111111111111111111111111111111",
        "So11111111111111111111111111111111111111112",
    ] {
        assert_eq!(validate_address(Chain::Solana, valid), Ok(()), "{valid}");
    }
    for invalid in [
        "0111111111111111111111111111111",
        "O1111111111111111111111111111111",
        "l1111111111111111111111111111111",
        "So1111111111111111111111111111111111111111I",
        "1111111111111111111111111111111",
        "111111111111111111111111111111111",
        "So111111111111111111111111111111111111111112",
        EIP55_VECTORS[0],
    ] {
        assert_eq!(
            validate_address(Chain::Solana, invalid),
            Err(INVALID_ADDRESS),
            "{invalid}"
        );
    }
}

#[test]
fn stellar_published_example() {
    assert_eq!(validate_address(Chain::Stellar, STELLAR_EXAMPLE), Ok(()));
    let data = base32_decode(STELLAR_EXAMPLE).expect("valid base32");
    let key: [u8; 32] = data[1..33].try_into().expect("32 bytes");
    assert_eq!(stellar_account(&key), STELLAR_EXAMPLE);
}

#[test]
fn stellar_one_changed_character_is_invalid() {
    assert_all_invalid(
        Chain::Stellar,
        one_char_changes(STELLAR_EXAMPLE, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    );
    let changed = STELLAR_EXAMPLE.replacen("GAAZ", "GAAY", 1);
    assert_eq!(validate_address(Chain::Stellar, &changed), Err(INVALID_CHECKSUM));
}

#[test]
fn stellar_malformed_addresses_are_invalid() {
    let mut seed = vec![18 << 3];
    seed.extend_from_slice(&[9; 32]);
    let crc = crc16_xmodem(&seed);
    seed.extend_from_slice(&crc.to_le_bytes());
    let secret_seed = base32_encode(&seed);
    assert!(secret_seed.starts_with('S'));
    for invalid in [
        secret_seed.as_str(),
        &STELLAR_EXAMPLE.to_lowercase(),
        &STELLAR_EXAMPLE[..55],
        &format!("{STELLAR_EXAMPLE}A"),
        &STELLAR_EXAMPLE.replacen('A', "1", 1),
    ] {
        assert_eq!(
            validate_address(Chain::Stellar, invalid),
            Err(INVALID_ADDRESS),
            "{invalid}"
        );
    }
}

#[test]
fn tron_addresses() {
    assert_eq!(validate_address(Chain::Tron, TRON_USDT), Ok(()));
    assert_all_invalid(Chain::Tron, one_char_changes(TRON_USDT, BASE58_ALPHABET));
    assert_eq!(
        validate_address(Chain::Tron, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"),
        Err(INVALID_CHECKSUM)
    );
    assert_eq!(
        validate_address(Chain::Tron, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"),
        Err(INVALID_ADDRESS)
    );
}

#[test]
fn generated_addresses_validate() {
    let mut rng = rng();
    for &chain in Chain::ALL {
        for _ in 0..200 {
            let address = generate_address(chain, &mut rng);
            assert_eq!(validate_address(chain, &address), Ok(()), "{chain:?} {address}");
        }
    }
}

#[test]
fn generated_addresses_have_each_chain_shape() {
    let mut rng = rng();
    for _ in 0..200 {
        let bitcoin = generate_address(Chain::Bitcoin, &mut rng);
        assert!(bitcoin.starts_with("bc1q") && bitcoin.len() == 42, "{bitcoin}");
        let stellar = generate_address(Chain::Stellar, &mut rng);
        assert!(
            stellar.starts_with('G') && stellar.len() == STELLAR_ADDRESS_LEN,
            "{stellar}"
        );
        let tron = generate_address(Chain::Tron, &mut rng);
        assert!(tron.starts_with('T') && tron.len() == 34, "{tron}");
        let solana = generate_address(Chain::Solana, &mut rng);
        assert_eq!(bs58::decode(&solana).into_vec().map(|key| key.len()), Ok(32));
    }
}

#[test]
fn generated_evm_addresses_are_mixed_case_eip55() {
    let mut rng = rng();
    for chain in EVM_CHAINS {
        for _ in 0..200 {
            let address = generate_address(chain, &mut rng);
            let digits = address.strip_prefix("0x").expect("EVM addresses start with 0x");
            assert_eq!(digits.len(), 40);
            assert!(digits.bytes().any(|b| b.is_ascii_lowercase()), "{address}");
            assert!(digits.bytes().any(|b| b.is_ascii_uppercase()), "{address}");
            assert_eq!(eip55(&digits.to_lowercase()), address);
        }
    }
}

#[test]
fn base32_round_trips_and_rejects_noise() {
    let mut rng = rng();
    for len in 0..40 {
        let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        assert_eq!(base32_decode(&base32_encode(&bytes)), Some(bytes));
    }
    assert_eq!(base32_encode(b"foobar"), "MZXW6YTBOI");
    assert_eq!(base32_decode("MZXW6YTBOI"), Some(b"foobar".to_vec()));
    assert_eq!(base32_decode("MZXW6YTBOJ"), None);
    assert_eq!(base32_decode("mzxw6ytboi"), None);
    assert_eq!(base32_decode("MZXW6YTBO="), None);
}

#[test]
fn crc16_xmodem_check_value() {
    assert_eq!(crc16_xmodem(b"123456789"), 0x31c3);
    assert_eq!(crc16_xmodem(b""), 0);
}

#[test]
fn odd_inputs_never_panic() {
    let huge = "1".repeat(1 << 20);
    let fixed = [
        "",
        " ",
        "\0",
        "0x",
        "bc1",
        "BC1",
        "bc1é",
        "tb1ééééé",
        "é",
        "G",
        "T",
        "💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸💸",
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeé",
        "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWNé",
        huge.as_str(),
    ];
    for &chain in Chain::ALL {
        for input in fixed {
            let _ = validate_address(chain, input);
        }
        assert_eq!(validate_address(chain, ""), Err(INVALID_ADDRESS));
        assert_eq!(validate_address(chain, &huge), Err(INVALID_ADDRESS));
    }
}

#[test]
fn random_strings_never_panic() {
    let alphabet: Vec<char> = "0x1bcqtpGTSAZ27lOI é💸\u{0}"
        .chars()
        .chain(BASE58_ALPHABET.chars())
        .collect();
    let mut rng = rng();
    for _ in 0..5_000 {
        let len = rng.gen_range(0..100);
        let input: String = (0..len)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
            .collect();
        for &chain in Chain::ALL {
            let _ = validate_address(chain, &input);
        }
    }
}
