//! A batch as uploaded: the CSV read with the `csv` crate (a header row,
//! quoted fields), every row checked before anything is filed (the asset,
//! the chain carrying it, the address with the service, the amount in the
//! asset's unit, repeated rows), the refusals listed by row, then the
//! service's preview for the fees and the wallet for the funds. A batch
//! pays one asset, as the service's batches do.

use std::collections::HashMap;

use paydesk_api::models::addresses::SupportedChain;
use paydesk_api::models::bulk::{BulkItemInput, NewBatch};
use paydesk_api::units::{decimal_to_units, format_decimal, units_to_decimal, BaseUnits, Currency};
use paydesk_api::Client;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::action::{retry_payload, BulkPayload, BulkRow, BulkTransferAction, RetryAction};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::state::AppState;
use crate::web::amount;
use crate::web::error::describe_upstream;
use crate::web::form::{Failure, Refusal};
use crate::withdrawals::filing::{assets_of, check_address};
use crate::withdrawals::{needs_memo, short_address};

const REFERENCE_PREFIX: &str = "paydesk-bulk-";
/// The most rows one file may hold.
pub const MAX_ROWS: usize = 500;
/// The assets a batch can pay (the service's bulk currencies).
const ASSETS: [&str; 3] = ["USDT", "USDC", "BTC"];

/// What a template download holds: the header and one example row.
pub const TEMPLATE: &str = "asset,chain,address,amount,reference,memo\n\
USDT,ethereum,0x742d35Cc6634C0532925a3b844Bc454e4438f44e,25.50,invoice-1001,\n";

/// The upload form as typed.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct Draft {
    #[serde(default)]
    pub csv: String,
    #[serde(default)]
    pub description: String,
    /// Fixed when the form is shown.
    #[serde(default)]
    pub reference: String,
}

impl Draft {
    pub fn fresh() -> Draft {
        Draft {
            reference: format!("{REFERENCE_PREFIX}{}", Uuid::new_v4().simple()),
            ..Draft::default()
        }
    }
}

/// A row of the file that can't be sent, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowProblem {
    /// 1-based, header excluded.
    pub row: usize,
    pub reason: String,
}

/// Why the file was refused: problems of the file as a whole, or a list
/// of rows to fix.
#[derive(Debug)]
pub enum SheetError {
    File(String),
    Rows(Vec<RowProblem>),
}

/// One row as read, before it is checked.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RawRow {
    pub row: usize,
    pub asset: String,
    pub chain: String,
    pub address: String,
    pub amount: String,
    pub reference: String,
    pub memo: String,
}

/// The file's rows, by header name (any order; `reference` and `memo`
/// optional).
pub fn read(text: &str) -> Result<Vec<RawRow>, SheetError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.trim().as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| SheetError::File(format!("The header row can't be read: {e}.")))?
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let needed = ["asset", "chain", "address", "amount"];
    if let Some(missing) = needed.iter().find(|n| column(n).is_none()) {
        return Err(SheetError::File(format!(
            "The header row has no `{missing}` column; it must name asset, chain, address and amount (reference and memo are optional). Download the template for an example."
        )));
    }
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let row = i + 1;
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                problems.push(RowProblem {
                    row,
                    reason: format!("can't be read ({e}); check its commas and quotes"),
                });
                continue;
            }
        };
        let cell = |name: &str| {
            column(name)
                .and_then(|c| record.get(c))
                .unwrap_or_default()
                .to_owned()
        };
        rows.push(RawRow {
            row,
            asset: cell("asset").to_ascii_uppercase(),
            chain: cell("chain").to_ascii_lowercase(),
            address: cell("address"),
            amount: cell("amount"),
            reference: cell("reference"),
            memo: cell("memo"),
        });
    }
    if !problems.is_empty() {
        return Err(SheetError::Rows(problems));
    }
    match rows.len() {
        0 => Err(SheetError::File(
            "The file has a header but no payments; add one row per payment.".to_owned(),
        )),
        n if n > MAX_ROWS => Err(SheetError::File(format!(
            "The file has {n} payments; a batch takes at most {MAX_ROWS}. Split it into several files."
        ))),
        _ => Ok(rows),
    }
}

/// A row's checks that need no service: the asset (one per file), the
/// chain carrying it, the amount in its unit, the memo, repeats. The
/// row as it will be sent, or why not.
fn check_row(
    raw: &RawRow,
    asset: &str,
    chains: &[SupportedChain],
    seen: &mut HashMap<String, usize>,
) -> Result<BulkRow, String> {
    let currency = Currency::parse(&raw.asset)
        .ok()
        .filter(|c| ASSETS.contains(&c.code()))
        .ok_or_else(|| {
            format!(
                "asset '{}' is not one a batch pays (USDT, USDC or BTC)",
                raw.asset
            )
        })?;
    if currency.code() != asset {
        return Err(format!(
            "pays {} but the file pays {asset} (row 1); put each asset in a file of its own",
            currency.code()
        ));
    }
    let decimals = currency.decimals().unwrap_or(0);
    let chain = chains
        .iter()
        .find(|c| c.chain == raw.chain)
        .ok_or_else(|| format!("chain '{}' is not one the service sends on", raw.chain))?;
    if !assets_of(chain).iter().any(|a| a == asset) {
        return Err(format!(
            "{asset} can't be sent on {}; it sends {}",
            chain.chain,
            assets_of(chain).join(", ")
        ));
    }
    if raw.address.is_empty() {
        return Err("the address is empty".to_owned());
    }
    let typed = amount::parse("the amount", &raw.amount, asset, decimals)?;
    let units = decimal_to_units(typed, decimals).map_err(|_| "the amount is too large".to_owned())?;
    if needs_memo(&chain.chain) && raw.memo.is_empty() {
        return Err(format!("a {} payment needs the recipient's memo", chain.chain));
    }
    if raw.memo.chars().count() > 64 {
        return Err("the memo is longer than 64 characters".to_owned());
    }
    let memo = Some(raw.memo.clone()).filter(|m| !m.is_empty());
    let reference = if raw.reference.is_empty() {
        format!("row-{}", raw.row)
    } else {
        raw.reference.clone()
    };
    if reference.len() > 64 {
        return Err("the reference is longer than 64 characters".to_owned());
    }
    let same = format!("{}|{}|{units}", chain.chain, raw.address.to_ascii_lowercase());
    for key in [format!("ref|{reference}"), same] {
        if let Some(first) = seen.get(&key) {
            let what = if key.starts_with("ref|") {
                "its reference"
            } else {
                "the same address and amount"
            };
            return Err(format!("repeats row {first} ({what})"));
        }
        seen.insert(key, raw.row);
    }
    Ok(BulkRow {
        row: raw.row,
        chain: chain.chain.clone(),
        address: raw.address.clone(),
        amount: BaseUnits(units),
        reference,
        memo,
    })
}

/// Every row checked: the rows to send, or every row's problem.
pub async fn check_rows(client: &Client, raw: &[RawRow]) -> Result<(String, Vec<BulkRow>), Failure> {
    let chains = client.supported_chains().await?.chains;
    let asset = raw.first().map(|r| r.asset.clone()).unwrap_or_default();
    let mut seen = HashMap::new();
    // Each address is asked about once, however many rows pay it.
    let mut verdicts: HashMap<(String, String), Result<(), String>> = HashMap::new();
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for r in raw {
        let checked = match check_row(r, &asset, &chains, &mut seen) {
            Ok(row) => {
                let key = (row.chain.clone(), row.address.clone());
                if !verdicts.contains_key(&key) {
                    let verdict = check_address(client, &row.chain, &row.address).await?;
                    verdicts.insert(key.clone(), verdict);
                }
                match &verdicts[&key] {
                    Ok(()) => Ok(row),
                    Err(m) => Err(m.trim_end_matches('.').to_owned()),
                }
            }
            Err(e) => Err(e),
        };
        match checked {
            Ok(row) => rows.push(row),
            Err(reason) => problems.push(RowProblem { row: r.row, reason }),
        }
    }
    if problems.is_empty() {
        Ok((asset, rows))
    } else {
        Err(Refusal::field("csv", rows_message(&problems)).into())
    }
}

/// The refusals: a first line, then one line per row (the page lists them).
pub fn rows_message(problems: &[RowProblem]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|p| format!("Row {}: {}.", p.row, p.reason))
        .collect();
    format!(
        "{} of the file can't be sent; nothing was filed. Fix {} and submit again (rows count payments, not the header).\n{}",
        if problems.len() == 1 { "One row" } else { "Some rows" },
        if problems.len() == 1 { "it" } else { "them" },
        lines.join("\n")
    )
}

pub fn items_of(rows: &[BulkRow]) -> Vec<BulkItemInput> {
    rows.iter()
        .map(|r| BulkItemInput {
            address: Some(r.address.clone()),
            chain: Some(r.chain.clone()),
            beneficiary_id: None,
            amount: r.amount,
            reference: r.reference.clone(),
            memo: r.memo.clone(),
        })
        .collect()
}

/// The file as a batch: checked row by row, previewed by the service for
/// its fees, weighed against the wallet.
pub async fn payload(client: &Client, d: &Draft) -> Result<BulkPayload, Failure> {
    if Uuid::parse_str(d.reference.trim_start_matches(REFERENCE_PREFIX)).is_err() {
        return Err(
            Refusal::form("The form is out of date; reload the page and paste the file again.").into(),
        );
    }
    let raw = match read(&d.csv) {
        Ok(raw) => raw,
        Err(SheetError::File(m)) => return Err(Refusal::field("csv", m).into()),
        Err(SheetError::Rows(p)) => return Err(Refusal::field("csv", rows_message(&p)).into()),
    };
    let (asset, rows) = check_rows(client, &raw).await?;
    let decimals = Currency::parse(&asset)
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(0);
    let preview = client
        .preview_bulk_transfer(&NewBatch {
            currency: asset.clone(),
            items: items_of(&rows),
            ..NewBatch::default()
        })
        .await
        .map_err(|e| Refusal::field("csv", describe_upstream(&e).0))?;
    let refused: Vec<RowProblem> = preview
        .items
        .iter()
        .filter(|i| !i.errors.is_empty())
        .map(|i| RowProblem {
            row: (i.row as usize)
                .checked_sub(1)
                .and_then(|n| rows.get(n))
                .map_or(i.row as usize, |r| r.row),
            reason: i.errors.join("; "),
        })
        .collect();
    if !refused.is_empty() {
        return Err(Refusal::field("csv", rows_message(&refused)).into());
    }
    let p = BulkPayload {
        currency: asset,
        decimals,
        description: d.description.trim().chars().take(200).collect(),
        amount: preview.totals.amount,
        fees: preview.totals.fees,
        rows,
    };
    let available = client.balance(&p.currency).await?.available_balance.value();
    let needed = p.amount.value() + p.fees.value();
    if available < needed {
        return Err(Refusal::form(format!(
            "The {} wallet holds {} but the batch needs {} (payments and network fees). Top up the wallet or send fewer rows.",
            p.currency,
            p.show(BaseUnits(available)),
            p.show(BaseUnits(needed))
        ))
        .into());
    }
    Ok(p)
}

/// Previews the batch until `confirmed`, then files it through the gate
/// under the form's reference: one request for every row.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn file(state: &AppState, member: &Member, d: &Draft, confirmed: bool) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::BulkRequest).await?;
    let payload = payload(&client, d).await?;
    let summary = format!(
        "Bulk transfer: {} payments, {}",
        payload.rows.len(),
        payload.show(payload.amount)
    );
    let amount = units_to_decimal(payload.amount.value(), payload.decimals);
    let currency = payload.currency.clone();
    let filing = Filing {
        target: &d.reference,
        summary: &summary,
        currency: &currency,
        payload,
        amount,
        reference: Some(d.reference.clone()),
        payee_saved_at: None,
    };
    gate::<BulkTransferAction>(state, member, filing, confirmed).await
}

/// Previews a retry of the batch's failed items until `confirmed`, then
/// files it through the gate (one pending retry per batch).
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, batch = %batch_id))]
pub async fn file_retry(
    state: &AppState,
    member: &Member,
    batch_id: Uuid,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::BulkRequest).await?;
    let batch = client.bulk_transfer(&batch_id.to_string()).await?;
    let Some(payload) = retry_payload(&batch) else {
        return Err(Refusal::form("No payment of this batch has failed; there is nothing to retry.").into());
    };
    let summary = format!(
        "Retry {} failed payments of bulk transfer {}",
        payload.items.len(),
        short_address(&batch_id.to_string())
    );
    let amount = units_to_decimal(payload.amount.value(), payload.decimals);
    let currency = payload.currency.clone();
    let target = batch_id.to_string();
    let filing = Filing {
        target: &target,
        summary: &summary,
        currency: &currency,
        payload,
        amount,
        reference: None,
        payee_saved_at: None,
    };
    gate::<RetryAction>(state, member, filing, confirmed).await
}

/// An amount of base units as people read it.
pub fn shown(units: BaseUnits, currency: &str) -> String {
    let decimals = Currency::parse(currency)
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(0);
    format!("{} {currency}", format_decimal(units.value(), decimals))
}

/// `0x1234…cdef`.
pub fn short(address: &str) -> String {
    short_address(address)
}

#[cfg(test)]
mod tests {
    use super::*;
    use paydesk_api::models::addresses::Token;

    fn chains() -> Vec<SupportedChain> {
        let token = |s: &str, d| Token {
            symbol: s.into(),
            decimals: d,
        };
        vec![SupportedChain {
            chain: "ethereum".into(),
            native_token: token("ETH", 18),
            stablecoins: vec![token("USDT", 6), token("USDC", 6)],
        }]
    }

    #[test]
    fn quoted_fields_and_any_column_order_are_read() {
        let rows = read("amount,ADDRESS,chain,asset,memo\n\"1,5\",0xabc,Ethereum,usdt,\n").unwrap();
        assert_eq!(rows[0].amount, "1,5");
        assert_eq!(rows[0].chain, "ethereum");
        assert_eq!(rows[0].asset, "USDT");
        assert!(matches!(
            read("asset,chain\nUSDT,ethereum\n"),
            Err(SheetError::File(_))
        ));
        assert!(matches!(
            read("asset,chain,address,amount\n"),
            Err(SheetError::File(_))
        ));
    }

    #[test]
    fn each_row_is_refused_with_its_reason() {
        let raw = read(
            "asset,chain,address,amount,reference\n\
             USDT,ethereum,0xabc,10,a\n\
             USDT,ethereum,0xabc,10,b\n\
             USDT,ethereum,0xdef,1.1234567,c\n\
             BTC,ethereum,0xdef,1,d\n\
             USDT,tron,0xdef,1,a\n",
        )
        .unwrap();
        let mut seen = HashMap::new();
        let checked: Vec<_> = raw
            .iter()
            .map(|r| check_row(r, "USDT", &chains(), &mut seen))
            .collect();
        assert_eq!(checked[0].as_ref().unwrap().amount, BaseUnits(10_000_000));
        assert!(checked[1].as_ref().unwrap_err().contains("repeats row 1"));
        assert!(checked[2].as_ref().unwrap_err().contains("more decimals"));
        assert!(checked[3].as_ref().unwrap_err().contains("file of its own"));
        assert!(checked[4].as_ref().unwrap_err().contains("chain 'tron'"));
    }
}
