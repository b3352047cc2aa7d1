//! A due clock-driven job, handed to the area it belongs to. The state
//! runs due jobs through this function, handed to it by the caller, so it
//! needs no area's code of its own.

use chrono::{DateTime, Utc};

use crate::areas::bulk::schedules as bulk_schedules;
use crate::areas::cards::model as cards;
use crate::areas::customers;
use crate::areas::deposits;
use crate::areas::lightning::{invoices, payments};
use crate::areas::payouts::model as payouts;
use crate::areas::trading::{schedules, targets};
use crate::areas::withdrawals;
use crate::scheduler::Job;
use crate::state::Store;

/// Runs one due job.
pub fn run(store: &mut Store, job: Job, now: DateTime<Utc>) {
    match job {
        Job::ConfirmDeposit {
            company_id,
            transaction_id,
        } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                deposits::confirm(company, transaction_id, &mut fx);
            }
        }
        Job::RetryDelivery { delivery_id } => store.outbox.mark_ready(delivery_id),
        Job::ReleaseDelivery { delivery_id } => store.outbox.release(delivery_id),
        Job::PayoutRail {
            company_id,
            payout_id,
        } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                payouts::advance_rail(company, payout_id, &mut fx);
            }
        }
        Job::PayoutExpiry {
            company_id,
            payout_id,
        } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                payouts::expire(company, payout_id, &mut fx);
            }
        }
        Job::ReviewKyc {
            company_id,
            customer_id,
        } => {
            if let Ok((company, _)) = store.company(company_id, now) {
                customers::review_kyc(company, customer_id, now);
            }
        }
        Job::ProvisionCard { company_id, card_id } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                cards::provision(company, card_id, &mut fx);
            }
        }
        Job::SettleCardTransfer {
            company_id,
            card_id,
            transaction_id,
        } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                cards::settle_transfer(company, card_id, transaction_id, &mut fx);
            }
        }
        Job::AdvanceWithdrawal {
            company_id,
            withdrawal_id,
        } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                withdrawals::advance(company, withdrawal_id, &mut fx);
            }
        }
        Job::FillTargetOrder { company_id, order_id } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                targets::fill(company, order_id, &mut fx);
            }
        }
        Job::ExpireTargetOrder { company_id, order_id } => {
            if let Ok((company, _)) = store.company(company_id, now) {
                targets::expire(company, order_id, now);
            }
        }
        Job::ExpireInvoice {
            company_id,
            invoice_id,
        } => {
            if let Ok((company, _)) = store.company(company_id, now) {
                invoices::expire(company, invoice_id, now);
            }
        }
        Job::SettleHeldPayment {
            company_id,
            payment_id,
        } => {
            store.touch(company_id);
            payments::settle_held(store, company_id, payment_id, now);
        }
        Job::BulkScheduleTick {
            company_id,
            schedule_id,
            generation,
        } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                bulk_schedules::tick(company, schedule_id, generation, &mut fx);
            }
        }
        Job::ScheduleTick {
            company_id,
            schedule_id,
            generation,
        } => {
            if let Ok((company, mut fx)) = store.company(company_id, now) {
                schedules::tick(company, schedule_id, generation, &mut fx);
            }
        }
        Job::EndLiteCard { company_id, card_id } => {
            if let Ok((company, _)) = store.company(company_id, now) {
                cards::end_lite(company, card_id, now);
            }
        }
    }
}
