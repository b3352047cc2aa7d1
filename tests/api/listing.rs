//! Paged lists and their CSV exports, as one listing type draws them.

use paydesk_api::models::customers::NewCustomer;

use crate::helpers::spawn_app;

/// 30 customers over pages of 25: the page offers "load more" with the
/// filter kept, htmx gets only the next rows, and the export holds every
/// customer the filter matches (audited), with formula-like text defused.
#[tokio::test]
async fn lists_page_with_their_filter_and_export_what_it_matches() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    for i in 0..30 {
        sandbox
            .create_customer(&NewCustomer {
                email: format!("list{i:02}@example.com"),
                customer_type: if i < 28 { "business" } else { "individual" }.into(),
                first_name: Some(if i == 0 {
                    "=SUM(A1)".into()
                } else {
                    format!("Person {i}")
                }),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let page = app.get_html("/customers?customer_type=business").await;
    let more = page
        .split("hx-get=\"/customers?")
        .nth(1)
        .expect("a load more link")
        .split('"')
        .next()
        .unwrap()
        .replace("&#38;", "&");
    assert!(more.starts_with("customer_type=business&cursor="), "{more}");
    let next = app
        .http
        .get(app.url(&format!("/customers?{more}")))
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!next.contains("<html"), "load more gets rows only");
    assert_eq!(
        next.matches("<tr>").count(),
        3,
        "the 3 business customers after the first 25"
    );

    let export_link = page
        .split("href=\"/customers/export.csv?")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(export_link, "customer_type=business");
    let res = app.get(&format!("/customers/export.csv?{export_link}")).await;
    assert_eq!(res.status().as_u16(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    let csv = res.text().await.unwrap();
    assert_eq!(
        csv.lines().count(),
        1 + 28,
        "a header and every matching customer: {csv}"
    );
    assert!(csv.contains("\"'=SUM(A1)\""), "formulas are defused: {csv}");
    assert!(!csv.contains("individual"));
    let actions = app.audit_actions().await;
    assert!(actions.contains(&("customers.exported".into(), "success".into())));

    let cards = app.get("/cards/export.csv").await;
    assert_eq!(cards.status().as_u16(), 200);
    assert!(cards
        .text()
        .await
        .unwrap()
        .starts_with("\"card_id\",\"created_at\",\"customer_id\""));
}

/// Every list the portal has, with its CSV export.
const LISTS: &[(&str, &str)] = &[
    ("/transactions", "/transactions/export.csv"),
    ("/payouts", "/approvals/export.csv"),
    ("/withdrawals", "/withdrawals/export.csv"),
    ("/bulk-transfers", "/bulk-transfers/export.csv"),
    ("/lightning", "/lightning/export.csv"),
    ("/trading", "/trading/export.csv"),
    ("/virtual-accounts", "/virtual-accounts/export.csv"),
    ("/addresses", "/addresses/export.csv"),
    ("/beneficiaries", "/beneficiaries/export.csv"),
    ("/trading/scheduled", "/trading/scheduled/export.csv"),
    ("/trading/targets", "/trading/targets/export.csv"),
    (
        "/bulk-transfers/schedules",
        "/bulk-transfers/schedules/export.csv",
    ),
    ("/cards", "/cards/export.csv"),
    ("/customers", "/customers/export.csv"),
    ("/events", "/events/export.csv"),
    ("/members", "/members/export.csv"),
    ("/approvals?tab=all", "/approvals/export.csv"),
    ("/audit", "/audit/export.csv"),
];

/// Each list takes a From and To date, keeps them in its export link, says
/// when a box is not a date, and exports as CSV what the dates match (on
/// record); a customer made today is in today's export and not in one of
/// a day long past.
#[tokio::test]
async fn every_list_filters_by_date_and_exports_what_the_dates_match() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    app.sandbox()
        .await
        .create_customer(&NewCustomer {
            email: "dated@example.com".into(),
            customer_type: "individual".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let today = chrono::Utc::now().date_naive();
    let join = |path: &str, query: &str| match path.contains('?') {
        true => format!("{path}&{query}"),
        false => format!("{path}?{query}"),
    };
    for (list, export) in LISTS {
        let page = app
            .get_html(&join(list, &format!("from={today}&to={today}")))
            .await;
        assert!(
            page.contains(&format!("name=\"from\" value=\"{today}\"")),
            "{list} keeps its From date"
        );
        let link = page
            .split(&format!("href=\"{export}?"))
            .nth(1)
            .unwrap_or_else(|| panic!("{list} links its export"))
            .split('"')
            .next()
            .unwrap()
            .replace("&#38;", "&");
        let pairs: Vec<&str> = link.split('&').collect();
        assert!(
            pairs.contains(&format!("from={today}").as_str())
                && pairs.contains(&format!("to={today}").as_str()),
            "{list}: {link}"
        );
        let bad = app.get_html(&join(list, "from=2026-13-40")).await;
        assert!(bad.contains("is not a date"), "{list} names a date it can't read");
        let res = app.get(&format!("{export}?{link}")).await;
        assert_eq!(res.status().as_u16(), 200, "{export}");
        assert!(res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv"));
        let csv = res.text().await.unwrap();
        assert!(
            csv.lines().next().is_some_and(|h| h.starts_with('"')),
            "{export}: {csv}"
        );
    }
    let csv = |range: String| {
        let app = &app;
        async move {
            app.get(&format!("/customers/export.csv?{range}"))
                .await
                .text()
                .await
                .unwrap()
        }
    };
    assert!(csv(format!("from={today}&to={today}"))
        .await
        .contains("dated@example.com"));
    assert!(!csv("from=2001-01-01&to=2001-01-31".into())
        .await
        .contains("dated@example.com"));
    let exported = app.audit_actions().await;
    assert!(exported.contains(&("lists.exported".into(), "success".into())));
}
