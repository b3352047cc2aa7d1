//! The menu. Each area declares its entries beside its routes
//! (`area::Area::menu`); start-up installs them once, in the areas' order,
//! with the permissions that open the gate's inbox (which the gate's
//! registered kinds decide). A member sees the entries they may use.

use std::sync::OnceLock;

use crate::access::member::Member;
use crate::access::permissions::Permission;

/// The menu's headings, in the order they show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MenuGroup {
    Home,
    Money,
    Cards,
    Controls,
    Admin,
    Developers,
}

impl MenuGroup {
    const ALL: [MenuGroup; 6] = [
        MenuGroup::Home,
        MenuGroup::Money,
        MenuGroup::Cards,
        MenuGroup::Controls,
        MenuGroup::Admin,
        MenuGroup::Developers,
    ];

    pub fn label(self) -> &'static str {
        match self {
            MenuGroup::Home => "",
            MenuGroup::Money => "Money",
            MenuGroup::Cards => "Cards",
            MenuGroup::Controls => "Controls",
            MenuGroup::Admin => "Admin",
            MenuGroup::Developers => "Developers",
        }
    }
}

/// Who sees an entry.
pub enum ShownTo {
    Everyone,
    /// Whoever holds one of these.
    Holding(&'static [Permission]),
    /// Whoever the approvals inbox lets in: readers, makers and checkers
    /// of some kind the gate knows, and auditors.
    GateReaders,
    /// Whoever the area's own rule lets in.
    When(fn(&Member) -> bool),
}

/// One entry of the menu, as an area declares it.
pub struct MenuEntry {
    pub group: MenuGroup,
    pub href: &'static str,
    pub label: &'static str,
    pub shown_to: ShownTo,
}

impl MenuEntry {
    pub const fn new(group: MenuGroup, href: &'static str, label: &'static str, shown_to: ShownTo) -> Self {
        MenuEntry {
            group,
            href,
            label,
            shown_to,
        }
    }
}

struct Menu {
    entries: Vec<&'static MenuEntry>,
    gate_readers: Vec<Permission>,
}

static MENU: OnceLock<Menu> = OnceLock::new();

/// Installs the areas' entries, once per process (every application a
/// process builds has the same areas).
pub fn install(entries: impl IntoIterator<Item = &'static MenuEntry>, gate_readers: Vec<Permission>) {
    MENU.get_or_init(|| Menu {
        entries: entries.into_iter().collect(),
        gate_readers,
    });
}

/// The entry that carries the live count of requests waiting for me.
pub const APPROVALS: &str = "/approvals";

/// The platform's own pages, the one entry of a platform admin who
/// belongs to no tenant yet.
pub const PLATFORM: (&str, &str) = ("/platform", "Platform");

pub struct NavItem {
    pub href: &'static str,
    pub label: &'static str,
    pub active: bool,
}

impl NavItem {
    /// Whether the entry carries the live count of requests waiting.
    pub fn counts_waiting(&self) -> bool {
        self.href == APPROVALS
    }
}

/// A heading of the menu and the entries under it the member may use.
pub struct NavGroup {
    pub label: &'static str,
    pub items: Vec<NavItem>,
}

/// The member's menu: each heading with the entries they may use.
pub fn for_member(member: &Member, current: &str) -> Vec<NavGroup> {
    let Some(menu) = MENU.get() else {
        return Vec::new();
    };
    let shown = |entry: &MenuEntry| match &entry.shown_to {
        ShownTo::Everyone => true,
        ShownTo::Holding(perms) => perms.iter().any(|p| member.can(*p)),
        ShownTo::GateReaders => menu.gate_readers.iter().any(|p| member.can(*p)),
        ShownTo::When(rule) => rule(member),
    };
    MenuGroup::ALL
        .into_iter()
        .map(|group| NavGroup {
            label: group.label(),
            items: menu
                .entries
                .iter()
                .filter(|e| e.group == group && shown(e))
                .map(|e| NavItem {
                    href: e.href,
                    label: e.label,
                    active: e.href == current,
                })
                .collect(),
        })
        .filter(|g| !g.items.is_empty())
        .collect()
}
