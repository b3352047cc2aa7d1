//! The company's addresses. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::addresses::Address;
use uuid::Uuid;

use crate::book::Book;
use crate::chains::Chain;
use crate::pagination::Sequenced;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AddressRecord {
    pub(super) seq: u64,
    pub address: Address,
}

impl Sequenced for AddressRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl crate::book::Record for AddressRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.address.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct AddressBook {
    pub(crate) records: Book<AddressRecord>,
    pub(super) stellar_shared: Option<String>,
}

impl AddressBook {
    pub fn find(&self, id: Uuid) -> Option<&Address> {
        self.records.iter().map(|r| &r.address).find(|a| a.id == id)
    }

    /// True when `address` is one of the company's addresses on `chain`.
    pub fn owns(&self, chain: Chain, address: &str) -> bool {
        self.records
            .iter()
            .any(|r| r.address.chain == chain.name() && r.address.address == address)
    }
}
