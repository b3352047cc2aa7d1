//! Tenant isolation: every route of the portal, walked as a member of
//! another tenant (a resource of tenant A is a 404, never its data) and as
//! a member of tenant A without the permission (403).

use paydesk_sandbox::{Fixture, RunningSandbox};

use crate::helpers::{csrf_in, location, spawn_app, TestApp};

/// Ids of tenant A's resources.
pub struct TenantA {
    transaction_id: String,
    address_id: String,
    audit_id: String,
    connection_id: String,
    role_id: String,
    member_id: String,
    tenant_id: String,
    event_id: String,
    request_id: String,
    customer_id: String,
    pub card_id: String,
    withdrawal_id: String,
    quote_id: String,
    order_id: String,
    schedule_id: String,
    target_id: String,
    invoice_id: String,
    invoice_request: String,
    va_id: String,
    bulk_id: String,
    grant_id: String,
    bulk_schedule_id: String,
    invitation_id: String,
}

/// Every route that acts on something, with the form fields it takes.
/// `{tx}` and friends are filled with tenant A's ids.
pub type Route = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

pub const ROUTES: &[Route] = &[
    ("GET", "/balances", &[]),
    ("GET", "/balances/USDT", &[]),
    ("GET", "/transactions", &[]),
    ("GET", "/transactions/export.csv", &[]),
    ("GET", "/statements", &[]),
    ("GET", "/statements/export.csv", &[]),
    ("GET", "/customers/export.csv", &[]),
    ("GET", "/rates", &[]),
    ("GET", "/rates/board", &[]),
    ("GET", "/rates/convert", &[]),
    (
        "POST",
        "/sandbox-tools/prices",
        &[("pair", "BTC/USDT"), ("price", "60000")],
    ),
    (
        "POST",
        "/sandbox-tools/deposits",
        &[("currency", "USDT"), ("amount", "1")],
    ),
    ("GET", "/virtual-accounts", &[]),
    ("GET", "/virtual-accounts/export.csv", &[]),
    ("GET", "/virtual-accounts/{va}", &[]),
    ("GET", "/virtual-accounts/{va}/deposits", &[]),
    ("POST", "/virtual-accounts/{va}/transfers", &[("amount", "100")]),
    (
        "POST",
        "/customers/{customer}/virtual-accounts",
        &[("reference", "paydesk-va-6f1e0c528a8e4c3b9d2a6b7f1a2c9e01")],
    ),
    (
        "POST",
        "/sandbox-tools/faults",
        &[
            ("method", "GET"),
            ("matching", "/api/x"),
            ("mode", "503"),
            ("count", "1"),
        ],
    ),
    (
        "POST",
        "/sandbox-tools/webhook-faults",
        &[("mode", "drop"), ("count", "1")],
    ),
    ("POST", "/sandbox-tools/faults/clear", &[]),
    (
        "POST",
        "/sandbox-tools/invoices/pay",
        &[("request", "{ln_request}")],
    ),
    ("GET", "/trading", &[]),
    ("GET", "/trading/export.csv", &[]),
    ("GET", "/lightning", &[]),
    ("GET", "/lightning/export.csv", &[]),
    ("GET", "/lightning/invoices/new", &[]),
    (
        "POST",
        "/lightning/invoices",
        &[
            ("amount", "1000"),
            ("description", "walk"),
            ("expiry", "60"),
            ("reference", "paydesk-invoice-00000000000000000000000000000001"),
        ],
    ),
    ("GET", "/lightning/invoices/{invoice}", &[]),
    ("GET", "/lightning/invoices/{invoice}/live", &[]),
    ("GET", "/lightning/pay", &[]),
    ("POST", "/lightning/pay/check", &[("request", "{ln_request}")]),
    (
        "POST",
        "/lightning/payments",
        &[("request", "{ln_request}"), ("max_fee", "5")],
    ),
    (
        "POST",
        "/trading/quotes",
        &[("pair", "BTC/USDT"), ("side", "buy"), ("quantity", "0.001")],
    ),
    ("GET", "/trading/quotes/{quote}", &[]),
    ("POST", "/trading/orders", &[("quote_id", "{quote}")]),
    ("GET", "/trading/orders/{order}", &[]),
    ("POST", "/trading/orders/{order}/cancel", &[]),
    ("GET", "/trading/scheduled", &[]),
    ("GET", "/trading/scheduled/export.csv", &[]),
    (
        "POST",
        "/trading/scheduled",
        &[("currency", "BTC"), ("quote_currency", "USDT"), ("amount", "5")],
    ),
    ("GET", "/trading/scheduled/{schedule}", &[]),
    ("POST", "/trading/scheduled/{schedule}/pause", &[]),
    ("GET", "/trading/targets", &[]),
    ("GET", "/trading/targets/export.csv", &[]),
    (
        "POST",
        "/trading/targets",
        &[
            ("pair", "BTC/USDT"),
            ("side", "buy"),
            ("quantity", "0.01"),
            ("target_price", "1000"),
        ],
    ),
    ("GET", "/trading/targets/{target}", &[]),
    ("POST", "/trading/targets/{target}/cancel", &[]),
    ("GET", "/cards/export.csv", &[]),
    ("GET", "/transactions/{tx}", &[]),
    ("GET", "/addresses", &[]),
    ("GET", "/addresses/export.csv", &[]),
    ("GET", "/addresses/{address}", &[]),
    (
        "POST",
        "/addresses",
        &[("chain", "ethereum"), ("reference", "iso-1")],
    ),
    (
        "POST",
        "/addresses/validate",
        &[("chain", "ethereum"), ("address", "0x0")],
    ),
    ("GET", "/chains", &[]),
    ("GET", "/audit", &[]),
    ("GET", "/audit/{audit}", &[]),
    ("GET", "/audit/export.csv", &[]),
    ("GET", "/events", &[]),
    ("GET", "/events/export.csv", &[]),
    ("GET", "/events/{event}", &[]),
    ("POST", "/events/{event}/replay", &[]),
    ("POST", "/audit/verify", &[]),
    ("GET", "/audit/verify/1", &[]),
    ("GET", "/audit/export.jsonl", &[]),
    ("GET", "/audit/checkpoints", &[]),
    ("POST", "/audit/checkpoints", &[]),
    ("GET", "/audit/checkpoints.json", &[]),
    ("GET", "/platform/audit", &[]),
    ("GET", "/platform/audit/export.jsonl", &[]),
    ("GET", "/roles", &[]),
    ("POST", "/roles", &[("name", "Sneaky")]),
    ("POST", "/roles/matrix", &[]),
    ("POST", "/roles/{role}/delete", &[]),
    ("GET", "/members", &[]),
    ("GET", "/members/export.csv", &[]),
    (
        "POST",
        "/members",
        &[("email", "x@example.com"), ("role_id", "{role}")],
    ),
    ("POST", "/members/{member}/role", &[("role_id", "{role}")]),
    ("POST", "/members/{member}/remove", &[]),
    ("POST", "/members/{member}/disable", &[]),
    ("POST", "/members/{member}/enable", &[]),
    ("POST", "/members/{member}/unlock", &[]),
    ("POST", "/members/two-factor", &[("required", "no")]),
    ("POST", "/members/invitations/{invitation}/revoke", &[]),
    ("POST", "/members/grants/{grant}/confirm", &[]),
    ("GET", "/connections", &[]),
    (
        "POST",
        "/connections",
        &[
            ("name", "x"),
            ("environment", "live"),
            ("base_url", "https://a.example"),
            ("client_id", "c"),
            ("client_secret", "s"),
        ],
    ),
    ("POST", "/connections/{connection}/test", &[]),
    ("POST", "/connections/{connection}/primary", &[]),
    ("POST", "/connections/{connection}/delete", &[]),
    ("GET", "/platform", &[]),
    ("GET", "/platform/outbox", &[]),
    ("POST", "/platform/tenants", &[("name", "Evil")]),
    ("POST", "/platform/allowlist", &[("base_url", "http://10.0.0.1")]),
    ("POST", "/platform/allowlist/remove", &[("base_url", "x")]),
    ("POST", "/platform/tenants/{tenant}/confirms", &[("on", "yes")]),
    ("POST", "/platform/tenants/{tenant}/grants/{grant}/confirm", &[]),
    ("POST", "/tenants/switch", &[("tenant_id", "{tenant}")]),
    ("GET", "/payouts", &[]),
    ("GET", "/payouts/new?country=NG", &[]),
    (
        "GET",
        "/payouts/lookup?country=NG&bank_code=058&account_number=0123456789",
        &[],
    ),
    (
        "POST",
        "/payouts",
        &[
            ("country", "NG"),
            ("from_asset", "USDT"),
            ("amount", "10"),
            ("bank_code", "058"),
            ("account_number", "1"),
            ("account_name", "x"),
        ],
    ),
    ("GET", "/beneficiaries", &[]),
    ("GET", "/beneficiaries/export.csv", &[]),
    ("GET", "/beneficiaries/new", &[]),
    (
        "POST",
        "/beneficiaries",
        &[
            ("name", "Iso payee"),
            ("kind", "bank"),
            ("country", "NG"),
            ("bank_code", "058"),
            ("account_number", "0123456789"),
            ("account_name", "Iso Payee"),
        ],
    ),
    ("GET", "/beneficiaries/00000000-0000-0000-0000-000000000001", &[]),
    (
        "POST",
        "/beneficiaries/00000000-0000-0000-0000-000000000001",
        &[("name", "x"), ("kind", "bank")],
    ),
    (
        "POST",
        "/beneficiaries/00000000-0000-0000-0000-000000000001/delete",
        &[],
    ),
    ("GET", "/approvals", &[]),
    ("GET", "/approvals/waiting", &[]),
    ("GET", "/approvals/rows", &[]),
    ("GET", "/approvals/export.csv", &[]),
    ("GET", "/approvals/{request}", &[]),
    ("POST", "/approvals/bulk", &[("pick", "{request}:0")]),
    ("POST", "/approvals/{request}/approve", &[("comment", "")]),
    ("POST", "/approvals/{request}/reject", &[("comment", "")]),
    ("POST", "/approvals/{request}/cancel", &[]),
    ("GET", "/customers", &[]),
    ("GET", "/customers/new", &[]),
    (
        "POST",
        "/customers",
        &[("email", "x@example.com"), ("customer_type", "individual")],
    ),
    ("GET", "/customers/{customer}", &[]),
    ("POST", "/customers/{customer}", &[("first_name", "X")]),
    ("POST", "/customers/{customer}/active", &[("active", "no")]),
    ("GET", "/customers/{customer}/kyc", &[]),
    (
        "POST",
        "/customers/{customer}/kyc",
        &[
            ("country", "NGA"),
            ("date_of_birth", "1990-01-01"),
            ("id_type", "passport"),
            ("id_number", "A1"),
            ("dial_code", "+234"),
            ("phone_number", "801"),
            ("line1", "x"),
            ("city", "x"),
            ("state", "x"),
            ("postal_code", "x"),
        ],
    ),
    ("GET", "/cards", &[]),
    ("GET", "/cards/new", &[]),
    (
        "POST",
        "/cards",
        &[
            ("card_type", "virtual"),
            ("customer_id", "{customer}"),
            ("amount", "5"),
        ],
    ),
    ("GET", "/cards/{card}", &[]),
    ("GET", "/cards/{card}/live", &[]),
    (
        "POST",
        "/cards/{card}/balance",
        &[
            ("direction", "fund"),
            ("amount", "1"),
            (
                "reference",
                "paydesk-card-balance-00000000000000000000000000000001",
            ),
        ],
    ),
    ("POST", "/cards/{card}/status", &[("status", "frozen")]),
    ("POST", "/cards/{card}/limits", &[("daily_limit", "5")]),
    ("POST", "/cards/{card}/reveal", &[]),
    ("POST", "/cards/{card}/terminate", &[("reason", "x")]),
    (
        "POST",
        "/cards/{card}/simulate-spend",
        &[("amount", "1"), ("merchant", "x")],
    ),
    ("GET", "/withdrawals", &[]),
    ("GET", "/withdrawals/export.csv", &[]),
    ("GET", "/withdrawals/new", &[]),
    (
        "GET",
        "/withdrawals/check?chain=ethereum&to_address=0x52908400098527886e0f7030069857d2e4169ee7",
        &[],
    ),
    (
        "POST",
        "/withdrawals",
        &[
            ("chain", "ethereum"),
            ("currency", "USDT"),
            ("to_address", "0x52908400098527886e0f7030069857d2e4169ee7"),
            ("amount", "1"),
            ("reference", "paydesk-withdrawal-00000000000000000000000000000001"),
        ],
    ),
    ("GET", "/withdrawals/{withdrawal}", &[]),
    ("GET", "/withdrawals/{withdrawal}/live", &[]),
    ("GET", "/bulk-transfers", &[]),
    ("GET", "/bulk-transfers/export.csv", &[]),
    ("GET", "/bulk-transfers/template.csv", &[]),
    (
        "POST",
        "/bulk-transfers",
        &[
            (
                "csv",
                "asset,chain,address,amount\nUSDT,ethereum,0x52908400098527886e0f7030069857d2e4169ee7,1\n",
            ),
            ("reference", "paydesk-bulk-00000000000000000000000000000001"),
        ],
    ),
    ("GET", "/bulk-transfers/{bulk}", &[]),
    ("GET", "/bulk-transfers/{bulk}/live", &[]),
    ("POST", "/bulk-transfers/{bulk}/retry", &[]),
    ("GET", "/bulk-transfers/schedules", &[]),
    ("GET", "/bulk-transfers/schedules/export.csv", &[]),
    (
        "POST",
        "/bulk-transfers/schedules",
        &[
            ("name", "Salaries"),
            ("frequency", "monthly"),
            ("day_of_month", "1"),
            ("execution_time", "09:00"),
            (
                "csv",
                "asset,chain,address,amount\nUSDT,ethereum,0x52908400098527886e0f7030069857d2e4169ee7,1\n",
            ),
            (
                "reference",
                "paydesk-bulk-schedule-00000000000000000000000000000001",
            ),
        ],
    ),
    ("POST", "/bulk-transfers/schedules/{bulk_schedule}/pause", &[]),
    ("GET", "/sandbox-tools", &[]),
    ("POST", "/sandbox-tools/advance", &[("seconds", "60")]),
    ("POST", "/sandbox-tools/deliveries/1/resend", &[]),
    ("GET", "/policies", &[]),
    (
        "POST",
        "/policies/settings/currency",
        &[("reporting_currency", "NGN")],
    ),
    (
        "POST",
        "/policies/payout",
        &[
            ("required_approvals", "1"),
            ("expires_after_hours", "1"),
            ("rate_tolerance_percent", "1"),
            ("reason", "why"),
        ],
    ),
];

pub fn fill(template: &str, a: &TenantA) -> String {
    template
        .replace("{tx}", &a.transaction_id)
        .replace("{address}", &a.address_id)
        .replace("{audit}", &a.audit_id)
        .replace("{connection}", &a.connection_id)
        .replace("{role}", &a.role_id)
        .replace("{grant}", &a.grant_id)
        .replace("{member}", &a.member_id)
        .replace("{tenant}", &a.tenant_id)
        .replace("{event}", &a.event_id)
        .replace("{request}", &a.request_id)
        .replace("{customer}", &a.customer_id)
        .replace("{card}", &a.card_id)
        .replace("{withdrawal}", &a.withdrawal_id)
        .replace("{quote}", &a.quote_id)
        .replace("{order}", &a.order_id)
        .replace("{schedule}", &a.schedule_id)
        .replace("{target}", &a.target_id)
        .replace("{invoice}", &a.invoice_id)
        .replace("{ln_request}", &a.invoice_request)
        .replace("{va}", &a.va_id)
        .replace("{bulk_schedule}", &a.bulk_schedule_id)
        .replace("{bulk}", &a.bulk_id)
        .replace("{invitation}", &a.invitation_id)
}

pub async fn call(app: &TestApp, method: &str, path: &str, fields: &[(String, String)]) -> (u16, String) {
    let token = csrf_in(&app.get_html("/account/password").await);
    let res = if method == "GET" {
        app.get(path).await
    } else {
        let mut form = vec![("csrf_token".to_owned(), token)];
        form.extend_from_slice(fields);
        app.http.post(app.url(path)).form(&form).send().await.unwrap()
    };
    let status = res.status().as_u16();
    (status, res.text().await.unwrap_or_default())
}

async fn option_value(app: &TestApp, page: &str, label: &str) -> String {
    app.get_html(page)
        .await
        .split("<option value=\"")
        .skip(1)
        .find(|c| c.split('<').next().unwrap().ends_with(&format!(">{label}")))
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

/// Tenant A (the demo tenant) with one of everything.
pub async fn populate_a(app: &TestApp) -> TenantA {
    let res = app
        .post_form(
            "/addresses",
            "/addresses",
            &[("chain", "base"), ("label", "A's"), ("reference", "a-1")],
        )
        .await;
    let address_id = location(&res)
        .trim_start_matches("/addresses/")
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    app.post_form("/roles", "/roles", &[("name", "Nothing")]).await;
    crate::access::add_member(app, "a-member@example.com", "Viewer", "amber-quartz-member").await;
    let role_id_viewer = option_value(app, "/members", "Viewer").await;
    app.post_form(
        "/members",
        "/members",
        &[("email", "a-invitee@example.com"), ("role_id", &role_id_viewer)],
    )
    .await;
    let invitation_id: String =
        sqlx::query_scalar("SELECT id::text FROM invitations WHERE email = 'a-invitee@example.com'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    // One webhook event, delivered as the service would.
    let (connection, sealed): (uuid::Uuid, Vec<u8>) =
        sqlx::query_as("SELECT id, client_secret_enc FROM connections WHERE is_builtin")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let secret = secrecy::ExposeSecret::expose_secret(&app.key.open(&sealed).unwrap()).to_owned();
    let body = serde_json::json!({"event": "deposit.success", "event_id": "evt_a", "company_id": uuid::Uuid::new_v4(),
                                  "data": {}, "created_at": "2026-11-23T00:00:00Z"})
    .to_string();
    let res = app
        .http
        .post(app.url(&format!("/hooks/{connection}")))
        .header(
            "x-service-signature",
            paydesk_api::webhook::sign_webhook(&secret, body.as_bytes()),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    // One payout request, which needs a second member able to approve it,
    // independent of the admin who files it.
    crate::approvals::members(app, "Approver", &["a-approver@example.com".into()]).await;
    let res = app
        .post_form(
            "/payouts/new?country=NG",
            "/payouts",
            &[
                ("country", "NG"),
                ("from_asset", "USDT"),
                ("amount", "10"),
                ("bank_code", "058"),
                ("account_number", "0123456789"),
                ("account_name", "Ada Okafor"),
                ("payment_reason", "salary"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    // A customer with approved card KYC and a card, made in the sandbox.
    let sandbox = app.sandbox().await;
    let customer = sandbox
        .create_customer(&paydesk_api::models::customers::NewCustomer {
            email: "a-customer@example.com".into(),
            customer_type: "individual".into(),
            first_name: Some("Ada".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let kyc = paydesk_api::models::customers::KycDetails {
        country: "NGA".into(),
        date_of_birth: "1990-01-01".into(),
        id_type: "passport".into(),
        id_number: "A123".into(),
        dial_code: "+234".into(),
        phone_number: "8012345678".into(),
        line1: "1 Marina".into(),
        city: "Lagos".into(),
        state: "Lagos".into(),
        postal_code: "100001".into(),
    };
    sandbox
        .submit_card_kyc(&customer.id.to_string(), &kyc)
        .await
        .unwrap();
    sandbox.sandbox_advance_clock(60).await.unwrap();
    let card = sandbox
        .create_card(&paydesk_api::models::cards::NewCard {
            amount: paydesk_api::units::MicroUnits(5_000_000),
            card_type: Some("virtual".into()),
            currency: "USD".into(),
            customer_id: Some(customer.id),
            ..Default::default()
        })
        .await
        .unwrap();
    // One withdrawal, sent straight to the sandbox (not through the portal).
    let withdrawal = sandbox
        .create_withdrawal(&paydesk_api::models::withdrawals::NewWithdrawal {
            to_address: "0x52908400098527886e0f7030069857d2e4169ee7".into(),
            amount: paydesk_api::units::BaseUnits(1_000_000),
            currency: "USDT".into(),
            chain: "ethereum".into(),
            reference: "a-withdrawal-1".into(),
            memo: None,
        })
        .await
        .unwrap();
    let trade = |side: &str| paydesk_api::models::trading::QuoteRequest {
        base_currency: "BTC".into(),
        quote_currency: "USDT".into(),
        side: side.into(),
        quantity: rust_decimal::Decimal::new(1, 3),
    };
    let traded = sandbox.create_trading_quote(&trade("buy")).await.unwrap();
    let order = sandbox
        .create_order(&paydesk_api::models::trading::OrderRequest {
            base_currency: "BTC".into(),
            quote_currency: "USDT".into(),
            side: "buy".into(),
            quantity: traded.quantity,
            quote_id: traded.id,
            ..Default::default()
        })
        .await
        .unwrap();
    let quote = sandbox.create_trading_quote(&trade("sell")).await.unwrap();
    let schedule = sandbox
        .create_scheduled_order(&paydesk_api::models::trading::NewSchedule {
            currency: "BTC".into(),
            quote_currency: "USDT".into(),
            amount: paydesk_api::units::BaseUnits(5_000_000),
            frequency: "daily".into(),
            execution_time: "09:00".into(),
            reference: "iso-dca".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let target = sandbox
        .create_target_order(&paydesk_api::models::trading::NewTargetOrder {
            base_currency: "BTC".into(),
            quote_currency: "USDT".into(),
            side: "buy".into(),
            quantity: rust_decimal::Decimal::new(1, 2),
            target_price: rust_decimal::Decimal::from(1000),
            reference: "iso-target".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let invoice = sandbox
        .create_invoice(&paydesk_api::models::lightning::NewInvoice {
            amount: paydesk_api::units::Sats(1000),
            description: "A's invoice".into(),
            reference: "iso-invoice".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let va = sandbox
        .create_virtual_account(&paydesk_api::models::virtual_accounts::NewVirtualAccount {
            customer_id: customer.id,
            reference: "iso-va".into(),
        })
        .await
        .unwrap();
    // One batch, drafted straight in the sandbox (not through the portal).
    let batch = sandbox
        .create_bulk_transfer(&paydesk_api::models::bulk::NewBatch {
            currency: "USDT".into(),
            reference: "iso-bulk".into(),
            items: vec![paydesk_api::models::bulk::BulkItemInput {
                address: Some("0x52908400098527886e0f7030069857d2e4169ee7".into()),
                chain: Some("ethereum".into()),
                amount: paydesk_api::units::BaseUnits(1_000_000),
                reference: "iso-1".into(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap();
    let bulk_schedule = sandbox
        .create_bulk_schedule(&paydesk_api::models::bulk::NewBulkSchedule {
            name: "iso".into(),
            currency: "USDT".into(),
            items: batch
                .items
                .iter()
                .map(|i| paydesk_api::models::bulk::BulkItemInput {
                    address: Some(i.address.clone()),
                    chain: Some(i.chain.clone()),
                    amount: i.amount,
                    reference: i.reference.clone(),
                    ..Default::default()
                })
                .collect(),
            frequency: "daily".into(),
            execution_time: "09:00".into(),
            reference: "iso-bulk-schedule".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    app.link_audit().await;
    let q = |sql: &'static str| async move {
        sqlx::query_scalar::<_, String>(sql)
            .fetch_one(&app.pool)
            .await
            .unwrap()
    };
    TenantA {
        transaction_id: {
            let page = app.get_html("/transactions").await;
            page.split("<td><a href=\"/transactions/")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_owned()
        },
        address_id,
        audit_id: q("SELECT id::text FROM audit_log WHERE action = 'roles.created'").await,
        connection_id: q("SELECT id::text FROM connections WHERE is_builtin").await,
        role_id: q("SELECT id::text FROM roles WHERE name = 'Nothing'").await,
        member_id: q("SELECT id::text FROM users WHERE email = 'a-member@example.com'").await,
        tenant_id: q("SELECT id::text FROM tenants WHERE name = 'Demo Company'").await,
        event_id: q("SELECT id::text FROM webhook_events LIMIT 1").await,
        request_id: q("SELECT id::text FROM action_requests LIMIT 1").await,
        customer_id: customer.id.to_string(),
        card_id: card.id.to_string(),
        withdrawal_id: withdrawal.id.to_string(),
        quote_id: quote.id.to_string(),
        order_id: order.id.to_string(),
        schedule_id: schedule.id.to_string(),
        target_id: target.id.to_string(),
        invoice_id: invoice.id.to_string(),
        invoice_request: invoice.request,
        va_id: va.id.to_string(),
        bulk_id: batch.id.to_string(),
        grant_id: sqlx::query_scalar(
            "SELECT g.id::text FROM access_grants g JOIN users u ON u.id = g.user_id \
             WHERE u.email = 'a-member@example.com'",
        )
        .fetch_one(&app.pool)
        .await
        .unwrap(),
        bulk_schedule_id: bulk_schedule.id.to_string(),
        invitation_id,
    }
}

#[tokio::test]
async fn a_member_of_another_tenant_gets_404_for_every_resource_of_this_one() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let a = populate_a(&app).await;

    // Tenant B, owned by Bob alone, connected to a sandbox of its own.
    let other_sandbox = RunningSandbox::start(&Fixture::demo()).await.unwrap();
    app.post_form(
        "/platform",
        "/platform/allowlist",
        &[("base_url", &other_sandbox.base_url)],
    )
    .await;
    app.post_form("/platform", "/platform/tenants", &[("name", "Other Co")])
        .await;
    let other = option_value(&app, "/", "Other Co").await;
    app.post_form("/", "/tenants/switch", &[("tenant_id", &other)])
        .await;
    let bob = crate::access::add_member(&app, "bob@other.example", "Owner", "bob-harbour-kettle-19").await;
    app.post_form("/", "/tenants/switch", &[("tenant_id", &a.tenant_id)])
        .await;
    let creds = other_sandbox
        .shared
        .store()
        .clients
        .values()
        .next()
        .map(|c| (c.id.to_string(), c.secret.clone()))
        .unwrap();
    let res = bob
        .post_form(
            "/connections",
            "/connections",
            &[
                ("name", "Other sandbox"),
                ("environment", "sandbox"),
                ("base_url", &other_sandbox.base_url),
                ("client_id", &creds.0),
                ("client_secret", &creds.1),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303, "the connection is filed");
    // Tenant B has a second admin (the platform admin who created it), so
    // the new connection waits for their approval.
    let request: String = sqlx::query_scalar(
        "SELECT id::text FROM action_requests WHERE kind = 'connection_change' AND status = 'pending'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    app.post_form("/", "/tenants/switch", &[("tenant_id", &other)])
        .await;
    assert_eq!(
        crate::approvals::approve(&app, &request).await.status().as_u16(),
        303
    );
    crate::approvals::wait_for_status(&app, &request, "executed").await;
    app.post_form("/", "/tenants/switch", &[("tenant_id", &a.tenant_id)])
        .await;

    let by_id = [
        ("GET", "/transactions/{tx}"),
        ("GET", "/addresses/{address}"),
        ("GET", "/audit/{audit}"),
        ("GET", "/events/{event}"),
        ("POST", "/events/{event}/replay"),
        ("GET", "/approvals/{request}"),
        ("POST", "/approvals/{request}/approve"),
        ("POST", "/approvals/{request}/reject"),
        ("POST", "/approvals/{request}/cancel"),
        ("POST", "/roles/{role}/delete"),
        ("POST", "/members/{member}/role"),
        ("POST", "/members/{member}/remove"),
        ("POST", "/members/{member}/unlock"),
        ("POST", "/members/invitations/{invitation}/revoke"),
        ("POST", "/members/grants/{grant}/confirm"),
        ("POST", "/connections/{connection}/test"),
        ("POST", "/connections/{connection}/primary"),
        ("POST", "/connections/{connection}/delete"),
        ("POST", "/tenants/switch"),
        ("GET", "/customers/{customer}"),
        ("POST", "/customers/{customer}"),
        ("POST", "/customers/{customer}/active"),
        ("GET", "/customers/{customer}/kyc"),
        ("POST", "/customers/{customer}/kyc"),
        ("GET", "/virtual-accounts/{va}"),
        ("GET", "/virtual-accounts/{va}/deposits"),
        ("POST", "/virtual-accounts/{va}/transfers"),
        ("POST", "/customers/{customer}/virtual-accounts"),
        ("GET", "/trading/quotes/{quote}"),
        ("POST", "/trading/orders"),
        ("GET", "/trading/orders/{order}"),
        ("POST", "/trading/orders/{order}/cancel"),
        ("GET", "/trading/scheduled/{schedule}"),
        ("POST", "/trading/scheduled/{schedule}/pause"),
        ("GET", "/trading/targets/{target}"),
        ("POST", "/trading/targets/{target}/cancel"),
        ("GET", "/cards/{card}"),
        ("GET", "/cards/{card}/live"),
        ("POST", "/cards/{card}/balance"),
        ("POST", "/cards/{card}/status"),
        ("POST", "/cards/{card}/limits"),
        ("POST", "/cards/{card}/reveal"),
        ("POST", "/cards/{card}/terminate"),
        ("POST", "/cards/{card}/simulate-spend"),
        ("GET", "/withdrawals/{withdrawal}"),
        ("GET", "/withdrawals/{withdrawal}/live"),
        ("GET", "/lightning/invoices/{invoice}"),
        ("GET", "/lightning/invoices/{invoice}/live"),
        ("GET", "/bulk-transfers/{bulk}"),
        ("GET", "/bulk-transfers/{bulk}/live"),
        ("POST", "/bulk-transfers/{bulk}/retry"),
        ("POST", "/bulk-transfers/schedules/{bulk_schedule}/pause"),
    ];
    for (method, template) in by_id {
        let (_, _, fields) = ROUTES
            .iter()
            .find(|(m, p, _)| *m == method && *p == template)
            .unwrap();
        let fields: Vec<(String, String)> =
            fields.iter().map(|(k, v)| (k.to_string(), fill(v, &a))).collect();
        let (status, body) = call(&bob, method, &fill(template, &a), &fields).await;
        assert_eq!(status, 404, "{method} {template}: {body}");
        assert!(
            !body.contains("Demo Company"),
            "{method} {template} leaks the tenant's name"
        );
    }
    // Lists show only B's own records.
    let audit = bob.get_html("/audit").await;
    assert!(!audit.contains("roles.created"));
    let addresses = bob.get_html("/addresses").await;
    assert!(!addresses.contains("A&#x27;s") && !addresses.contains("A's"));
    let members = bob.get_html("/members").await;
    assert!(!members.contains("a-member@example.com"));
    // A's data is untouched.
    let still: i64 = sqlx::query_scalar("SELECT count(*) FROM roles WHERE name = 'Nothing'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(still, 1);
}

#[tokio::test]
async fn a_member_without_permissions_is_refused_every_route() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let a = populate_a(&app).await;
    let nobody =
        crate::access::add_member(&app, "nobody@example.com", "Nothing", "nobody-violet-lantern").await;

    let home = nobody.get_html("/").await;
    for href in [
        "/balances",
        "/transactions",
        "/addresses",
        "/audit",
        "/members",
        "/roles",
        "/connections",
        "/platform",
        "/customers",
        "/cards",
        "/sandbox-tools",
        "/withdrawals",
        "/lightning",
        "/bulk-transfers",
    ] {
        assert!(!home.contains(&format!("href=\"{href}\"")), "menu shows {href}");
    }
    for (method, template, fields) in ROUTES {
        if *template == "/tenants/switch" {
            continue; // switching to one's own tenant needs no permission
        }
        let fields: Vec<(String, String)> =
            fields.iter().map(|(k, v)| (k.to_string(), fill(v, &a))).collect();
        let (status, body) = call(&nobody, method, &fill(template, &a), &fields).await;
        assert_eq!(status, 403, "{method} {template}: {body}");
    }
}
