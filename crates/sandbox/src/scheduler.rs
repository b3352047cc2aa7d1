//! Time-driven work on the sandbox clock: each job is due at a sandbox
//! time, and runs when the clock reaches it — by a clock advance or as real
//! time passes.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Every kind of deferred step.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Job {
    ConfirmDeposit {
        company_id: Uuid,
        transaction_id: Uuid,
    },
    RetryDelivery {
        delivery_id: u64,
    },
    /// A delivery held back by a fault (`delay_s`, `out_of_order`) goes
    /// out.
    ReleaseDelivery {
        delivery_id: u64,
    },
    PayoutRail {
        company_id: Uuid,
        payout_id: Uuid,
    },
    PayoutExpiry {
        company_id: Uuid,
        payout_id: Uuid,
    },
    ReviewKyc {
        company_id: Uuid,
        customer_id: Uuid,
    },
    ProvisionCard {
        company_id: Uuid,
        card_id: Uuid,
    },
    SettleCardTransfer {
        company_id: Uuid,
        card_id: Uuid,
        transaction_id: Uuid,
    },
    EndLiteCard {
        company_id: Uuid,
        card_id: Uuid,
    },
    AdvanceWithdrawal {
        company_id: Uuid,
        withdrawal_id: Uuid,
    },
    FillTargetOrder {
        company_id: Uuid,
        order_id: Uuid,
    },
    ExpireTargetOrder {
        company_id: Uuid,
        order_id: Uuid,
    },
    ExpireInvoice {
        company_id: Uuid,
        invoice_id: Uuid,
    },
    /// A held Lightning payment (test value `hold`) settles.
    SettleHeldPayment {
        company_id: Uuid,
        payment_id: Uuid,
    },
    BulkScheduleTick {
        company_id: Uuid,
        schedule_id: Uuid,
        generation: u64,
    },
    ScheduleTick {
        company_id: Uuid,
        schedule_id: Uuid,
        generation: u64,
    },
}

#[derive(Debug, Default)]
pub struct Scheduler {
    queue: BinaryHeap<Reverse<(DateTime<Utc>, u64)>>,
    jobs: HashMap<u64, Job>,
    next_id: u64,
    /// Each company's pending jobs, in due order (a company's snapshot
    /// and its head row read them at every keep).
    by_company: HashMap<Uuid, BTreeSet<(DateTime<Utc>, u64)>>,
}

impl Job {
    /// The company the job acts on; none for a webhook retry.
    fn company_id(&self) -> Option<Uuid> {
        match self {
            Job::RetryDelivery { .. } | Job::ReleaseDelivery { .. } => None,
            Job::ConfirmDeposit { company_id, .. }
            | Job::PayoutRail { company_id, .. }
            | Job::PayoutExpiry { company_id, .. }
            | Job::ReviewKyc { company_id, .. }
            | Job::ProvisionCard { company_id, .. }
            | Job::SettleCardTransfer { company_id, .. }
            | Job::EndLiteCard { company_id, .. }
            | Job::AdvanceWithdrawal { company_id, .. }
            | Job::FillTargetOrder { company_id, .. }
            | Job::ExpireTargetOrder { company_id, .. }
            | Job::ExpireInvoice { company_id, .. }
            | Job::SettleHeldPayment { company_id, .. }
            | Job::BulkScheduleTick { company_id, .. }
            | Job::ScheduleTick { company_id, .. } => Some(*company_id),
        }
    }
}

impl Scheduler {
    /// Drops a company's pending jobs (its state was reset); their queue
    /// entries are skipped when they come up.
    pub fn forget_company(&mut self, company_id: Uuid) {
        for (_, id) in self.by_company.remove(&company_id).unwrap_or_default() {
            self.jobs.remove(&id);
        }
    }

    pub fn schedule(&mut self, at: DateTime<Utc>, job: Job) {
        self.next_id += 1;
        if let Some(company_id) = job.company_id() {
            self.by_company
                .entry(company_id)
                .or_default()
                .insert((at, self.next_id));
        }
        self.jobs.insert(self.next_id, job);
        self.queue.push(Reverse((at, self.next_id)));
    }

    /// The earliest job due at or before `until`, removed from the queue.
    pub fn pop_due(&mut self, until: DateTime<Utc>) -> Option<(DateTime<Utc>, Job)> {
        let Reverse((at, id)) = *self.queue.peek()?;
        if at > until {
            return None;
        }
        self.queue.pop();
        match self.jobs.remove(&id) {
            Some(job) => {
                if let Some(company_id) = job.company_id() {
                    if let Some(set) = self.by_company.get_mut(&company_id) {
                        set.remove(&(at, id));
                        if set.is_empty() {
                            self.by_company.remove(&company_id);
                        }
                    }
                }
                Some((at, job))
            }
            // A forgotten job: look at the next one.
            None => self.pop_due(until),
        }
    }

    /// A company's pending jobs with their due times, in due order.
    pub fn jobs_of(&self, company_id: Uuid) -> Vec<(DateTime<Utc>, Job)> {
        self.by_company
            .get(&company_id)
            .into_iter()
            .flatten()
            .filter_map(|(at, id)| self.jobs.get(id).map(|job| (*at, job.clone())))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn pops_in_due_order_and_only_when_due() {
        let t0 = Utc::now();
        let mut s = Scheduler::default();
        s.schedule(t0 + Duration::seconds(20), Job::RetryDelivery { delivery_id: 2 });
        s.schedule(t0 + Duration::seconds(10), Job::RetryDelivery { delivery_id: 1 });
        assert!(s.pop_due(t0).is_none());
        let (_, first) = s.pop_due(t0 + Duration::seconds(30)).unwrap();
        assert_eq!(first, Job::RetryDelivery { delivery_id: 1 });
        let (_, second) = s.pop_due(t0 + Duration::seconds(30)).unwrap();
        assert_eq!(second, Job::RetryDelivery { delivery_id: 2 });
        assert!(s.is_empty());
    }

    #[test]
    fn a_companys_jobs_are_listed_in_due_order_and_forgotten_with_it() {
        let t0 = Utc::now();
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let review = |company_id| Job::ReviewKyc {
            company_id,
            customer_id: Uuid::nil(),
        };
        let mut s = Scheduler::default();
        s.schedule(t0 + Duration::seconds(30), review(a));
        s.schedule(t0 + Duration::seconds(10), review(a));
        s.schedule(t0 + Duration::seconds(20), review(b));
        let of_a: Vec<_> = s
            .jobs_of(a)
            .into_iter()
            .map(|(at, _)| (at - t0).num_seconds())
            .collect();
        assert_eq!(of_a, [10, 30]);
        s.pop_due(t0 + Duration::seconds(10)).unwrap();
        assert_eq!(s.jobs_of(a).len(), 1);
        s.forget_company(a);
        assert!(s.jobs_of(a).is_empty());
        assert_eq!(s.jobs_of(b).len(), 1);
        let (_, job) = s.pop_due(t0 + Duration::seconds(60)).unwrap();
        assert_eq!(job, review(b));
        assert!(s.pop_due(t0 + Duration::seconds(60)).is_none());
    }
}
